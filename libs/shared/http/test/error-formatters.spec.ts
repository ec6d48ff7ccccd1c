import express from 'express';
import request from 'supertest';
import { createProblemDetailsFormatter } from '../src';
import { badRequest } from '@nhp/shared-errors';
import { buildApp } from './support';

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
