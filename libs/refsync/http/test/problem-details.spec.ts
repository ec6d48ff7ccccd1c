import { problemDetailsSchema } from '@nhp/refsync-contracts';
import { AppError, badRequest, serviceUnavailable } from '@nhp/shared-errors';
import { createHttpApp } from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import type { Express } from 'express';
import request from 'supertest';
import {
  createProblemDetailsFormatter,
  problemDetailsFormatter,
  type ProblemDetailsOptions,
} from '../src';

function appThrowing(err: unknown, options?: ProblemDetailsOptions): Express {
  return createHttpApp({
    logger: createLogger({ name: 'test', level: 'silent' }),
    errorFormatter: options ? createProblemDetailsFormatter(options) : problemDetailsFormatter,
    bodyLimit: '1kb',
    routes: (app) => {
      app.get('/x', () => {
        throw err;
      });
      app.post('/echo', (req, res) => {
        res.json({ body: req.body as unknown });
      });
      app.route('/part/v1').post((_req, res) => res.status(201).json({}));
    },
  });
}

describe('RFC 9457 problem details', () => {
  it('when a base URI is configured, then type names the code and errors carries exposed field errors', async () => {
    const app = appThrowing(
      badRequest('INVALID_SINCE_VERSION', 'sinceVersion must be a non-negative integer', [
        { path: 'query.sinceVersion', message: 'must be a non-negative integer' },
      ]),
      { typeBaseUri: 'https://refsync.example/problems/' },
    );
    const res = await request(app).get('/x?sinceVersion=-1');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toEqual({
      type: 'https://refsync.example/problems/invalid-since-version',
      title: 'Bad Request',
      status: 400,
      detail: 'sinceVersion must be a non-negative integer',
      instance: '/x',
      code: 'INVALID_SINCE_VERSION',
      errors: [{ path: 'query.sinceVersion', message: 'must be a non-negative integer' }],
    });
    expect(problemDetailsSchema.safeParse(res.body).success).toBe(true);
  });

  it('when details are not field errors, then they are not sent', async () => {
    const app = appThrowing(badRequest('ODD', 'odd input', { secret: 'x' }));
    const res = await request(app).get('/x');
    expect(res.body).not.toHaveProperty('errors');
    expect(res.text).not.toContain('secret');
  });

  it('when the JSON body is malformed, then problem details say 400 without quoting the body or the query', async () => {
    const app = appThrowing(undefined);
    const res = await request(app)
      .post('/echo?x=1')
      .set('Content-Type', 'application/json')
      .send('{"fnr": "0101701234');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'Request body is not valid JSON',
      instance: '/echo',
      code: 'MALFORMED_JSON',
    });
  });

  it('when an error is a 5xx, then its code is sent but not its message, and its headers are', async () => {
    const app = appThrowing(
      serviceUnavailable('DATABASE_UNAVAILABLE', 'MongoDB at db:27017 refused', undefined, {
        headers: { 'Retry-After': '5' },
      }),
    );
    const res = await request(app).get('/x');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toMatchObject({
      title: 'Service Unavailable',
      detail: 'An unexpected error occurred',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect(res.text).not.toContain('27017');
  });

  it('when a handler throws something that is not an AppError, then 500 INTERNAL_ERROR says nothing internal', async () => {
    const app = appThrowing(new TypeError('cannot read properties of undefined (reading fnr)'));
    const res = await request(app).get('/x');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(res.text).not.toMatch(/TypeError|fnr/);
  });

  it('when a method is not allowed, then 405 problem details with Allow', async () => {
    const res = await request(appThrowing(undefined)).delete('/part/v1');
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('POST');
    expect(res.body).toMatchObject({
      status: 405,
      title: 'Method Not Allowed',
      code: 'METHOD_NOT_ALLOWED',
    });
  });

  it('when a 4xx is not exposed, then detail is the status phrase', async () => {
    const app = appThrowing(
      new AppError({
        code: 'X_CONFLICT',
        status: 409,
        message: 'row 7 of tenant 3',
        expose: false,
      }),
    );
    const res = await request(app).get('/x');
    expect(res.body).toMatchObject({ detail: 'Conflict', code: 'X_CONFLICT' });
  });
});
