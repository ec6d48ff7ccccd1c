import request from 'supertest';
import { LogCapture, startHarness, TEST_KEY, type Harness } from './support/harness';

/**
 * Credentials and identity numbers in a URL never reach a log line, whatever the parameter is
 * called: the real app with its real logger writing to a stream, the lines read as text.
 */
let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

const FNR = '13116900216';
const SECRETS = {
  api_key: 'k3y-value-one',
  ApiKey: 'k3y-value-two',
  access_token: 'eyJhbGciOiJFUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl',
  client_secret: 's3cret-value',
  password: 'pa55word-value',
  assertion: 'a55ertion-value',
  authCode: 'c0de-value',
};

describe('log redaction by rule', () => {
  it('when a URL carries credential-named parameters and identity numbers, then no log line holds them, and other parameters stay', async () => {
    const logs = new LogCapture('debug');
    const app = harness.app({ logger: logs.logger });
    const query = new URLSearchParams({ ...SECRETS, page: 'page-two', who: FNR });
    for (const path of [`/nope/${FNR}`, '/api/v1/treatmentGroup']) {
      const before = logs.raw.length;
      await request(app).get(`${path}?${query.toString()}`);
      await request(app).get(`${path}?${query.toString()}`).set('X-API-KEY', TEST_KEY);
      const text = logs.raw.slice(before).join('\n');
      expect(text).toContain('page-two');
      expect(text).not.toContain(FNR);
      for (const value of Object.values(SECRETS)) expect(text).not.toContain(value);
    }
  });
});
