import {
  AppError,
  badRequest,
  conflict,
  forbidden,
  headersTooLarge,
  methodNotAllowed,
  notAcceptable,
  notFound,
  serviceUnavailable,
  unauthorized,
  unsupportedMediaType,
} from '../src';

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
      [headersTooLarge('A', 'm'), 431, 'validation'],
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

it('when the category is internal, then the error is a programmer error; otherwise operational', () => {
  expect(new AppError({ code: 'X', status: 500, message: 'm' }).operational).toBe(false);
  expect(serviceUnavailable('X', 'm').operational).toBe(true);
  expect(badRequest('X', 'm').operational).toBe(true);
});
