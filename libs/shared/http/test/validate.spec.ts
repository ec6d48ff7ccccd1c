import request from 'supertest';
import { z } from 'zod';
import { validate, type ErrorFormatter } from '../src';
import { buildApp, plainFormatter, problemJsonFormatter } from './support';

const DEFINISJON_GUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function searchApp(errorFormatter: ErrorFormatter = problemJsonFormatter) {
  return buildApp({
    errorFormatter,
    routes: (app) => {
      app.get(
        '/definisjoner/:definisjonGuid',
        validate(
          {
            params: z.object({ definisjonGuid: z.uuid() }),
            query: z.object({
              pagingReference: z.coerce.number().int().min(0).default(0),
              partKode: z.string().optional(),
            }),
            headers: z.object({ 'x-hn-isdebug': z.enum(['true', 'false']).optional() }),
          },
          (input, req, res) => {
            res.json({
              parsed: input,
              rawQuery: req.query,
              typeofPagingReference: typeof input.query.pagingReference,
            });
          },
        ),
      );
      app.post(
        '/part/v1',
        validate(
          {
            body: z.object({ partKode: z.string().min(1), navn: z.string().nullable().optional() }),
          },
          async (input, _req, res) => {
            await Promise.resolve();
            if (input.body.partKode === 'FAIL') throw new Error('repository blew up');
            res.status(201).json({ created: input.body.partKode });
          },
        ),
      );
    },
  });
}

describe('validate', () => {
  it('when the request is valid, then the handler gets coerced values and req.query stays as sent', async () => {
    const { app } = searchApp();
    const res = await request(app)
      .get(`/definisjoner/${DEFINISJON_GUID}?pagingReference=20&partKode=HN&extra=1`)
      .set('X-hn-isdebug', 'true');
    expect(res.status).toBe(200);
    expect(res.body.typeofPagingReference).toBe('number');
    expect(res.body.parsed.query).toEqual({ pagingReference: 20, partKode: 'HN' });
    expect(res.body.parsed.params).toEqual({ definisjonGuid: DEFINISJON_GUID });
    expect(res.body.parsed.headers).toEqual({ 'x-hn-isdebug': 'true' });
    // Express 5's req.query getter was neither replaced nor written to.
    expect(res.body.rawQuery).toEqual({ pagingReference: '20', partKode: 'HN', extra: '1' });
  });

  it('when an optional query value is absent, then the schema default reaches the handler', async () => {
    const { app } = searchApp();
    const res = await request(app).get(`/definisjoner/${DEFINISJON_GUID}`);
    expect(res.body.parsed.query).toEqual({ pagingReference: 0 });
  });

  it('when several parts are invalid, then one 400 lists every issue in problem details', async () => {
    const { app } = searchApp(problemJsonFormatter);
    const res = await request(app)
      .get('/definisjoner/not-a-uuid?pagingReference=-1')
      .set('X-hn-isdebug', 'maybe');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      title: 'Bad Request',
    });
    expect(res.body.errors).toEqual([
      { location: 'params', path: 'definisjonGuid', message: expect.any(String) },
      { location: 'query', path: 'pagingReference', message: expect.any(String) },
      { location: 'headers', path: 'x-hn-isdebug', message: expect.any(String) },
    ]);
    expect(res.body.detail).toMatch(
      /^Invalid request: params\.definisjonGuid: .+; query\.pagingReference: .+; headers\.x-hn-isdebug: .+/,
    );
  });

  it('when the body is invalid, then a JSON error body names the field in its message', async () => {
    const { app } = searchApp(plainFormatter);
    const res = await request(app).post('/part/v1').send({ partKode: 42 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/^Invalid request: body\.partKode: /),
      category: 'validation',
    });
  });

  it('when there is no body where one is required, then the answer is 400, not a crash', async () => {
    const { app } = searchApp();
    const res = await request(app).post('/part/v1');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ location: 'body', path: '', message: expect.any(String) }]);
  });

  it('when the async handler rejects, then the central handler answers 500', async () => {
    const { app } = searchApp();
    const res = await request(app).post('/part/v1').send({ partKode: 'FAIL' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('repository blew up');
    expect((await request(app).post('/part/v1').send({ partKode: 'HN' })).body).toEqual({
      created: 'HN',
    });
  });

  it('when there are more issues than the message shows, then it says how many more', async () => {
    const { app } = buildApp({
      errorFormatter: plainFormatter,
      routes: (app) =>
        app.post(
          '/many',
          validate(
            {
              body: z.object({
                a: z.string(),
                b: z.string(),
                c: z.string(),
                d: z.string(),
                e: z.string(),
                f: z.string(),
                g: z.string(),
              }),
            },
            (_input, _req, res) => {
              res.end();
            },
          ),
        ),
    });
    const res = await request(app).post('/many').send({});
    expect(res.body.message).toMatch(/\(and 2 more\)$/);
  });
});
