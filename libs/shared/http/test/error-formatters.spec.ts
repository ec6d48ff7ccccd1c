import express from 'express';
import request from 'supertest';
import {
  AppError,
  badRequest,
  conflict,
  createProblemDetailsFormatter,
  forbidden,
  methodNotAllowed,
  notAcceptable,
  notFound,
  privacyErrorCategory,
  serviceUnavailable,
  unauthorized,
  unsupportedMediaType,
} from '../src';
import { buildApp } from './support';

describe('AppError', () => {
  it('when built by a factory, then status, code, default category and exposure follow the status', () => {
    const cases: Array<[AppError, number, string]> = [
      [badRequest('A', 'm'), 400, 'validation'],
      [unauthorized('A', 'm'), 401, 'authentication'],
      [forbidden('A', 'm'), 403, 'authorization'],
      [notFound('A', 'm'), 404, 'not-found'],
      [methodNotAllowed('A', 'm'), 405, 'method'],
      [notAcceptable('A', 'm'), 406, 'method'],
      [conflict('A', 'm'), 409, 'conflict'],
      [unsupportedMediaType('A', 'm'), 415, 'validation'],
      [serviceUnavailable('A', 'm'), 503, 'unavailable'],
    ];
    for (const [error, status, category] of cases) {
      expect(error).toBeInstanceOf(AppError);
      expect(error).toBeInstanceOf(Error);
      expect({ status: error.status, category: error.category, expose: error.expose }).toEqual({
        status,
        category,
        expose: status < 500,
      });
    }
  });

  it('when the status is not an error status, then construction fails loudly', () => {
    expect(() => new AppError({ code: 'X', status: 200, message: 'ok' })).toThrow(RangeError);
  });

  it('when extras are given, then they override defaults and keep the cause', () => {
    const cause = new Error('low-level');
    const error = unauthorized('TOKEN_EXPIRED', 'Token expired', undefined, {
      headers: { 'WWW-Authenticate': 'DPoP' },
      cause,
    });
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'DPoP' });
    expect(error.cause).toBe(cause);
  });
});

describe('privacyErrorCategory', () => {
  it.each([
    [400, 'ClientValidationError'],
    [401, 'SessionExpired'],
    [403, 'ClientValidationError'],
    [404, 'ClientValidationError'],
    [405, 'ClientValidationError'],
    [415, 'ClientValidationError'],
    [500, 'Unknown'],
    [502, 'EndpointUnknownError'],
    [503, 'EndpointIsDown'],
    [504, 'EndpointIsDown'],
  ])(
    'when the status is %d and no enum category is set, then errorCategory is %s',
    (status, category) => {
      expect(privacyErrorCategory(new AppError({ code: 'X', status, message: 'm' }))).toBe(
        category,
      );
    },
  );

  it('when the AppError category is an enum value, then it wins over the status', () => {
    expect(
      privacyErrorCategory(
        new AppError({ code: 'X', status: 500, message: 'm', category: 'Critical' }),
      ),
    ).toBe('Critical');
  });
});

describe('problem details with a type base URI', () => {
  it('when a base URI is configured, then type names the code and errors carries exposed details', async () => {
    const { app } = buildApp({
      errorFormatter: createProblemDetailsFormatter({
        typeBaseUri: 'https://refsync.example/problems/',
      }),
      routes: (app: express.Express) =>
        app.get('/x', () => {
          throw badRequest('INVALID_SINCE_VERSION', 'sinceVersion must be a non-negative integer', [
            { path: 'sinceVersion' },
          ]);
        }),
    });
    const res = await request(app).get('/x?sinceVersion=-1');
    expect(res.body).toEqual({
      type: 'https://refsync.example/problems/invalid-since-version',
      title: 'Bad Request',
      status: 400,
      detail: 'sinceVersion must be a non-negative integer',
      instance: '/x',
      code: 'INVALID_SINCE_VERSION',
      errors: [{ path: 'sinceVersion' }],
    });
  });
});
