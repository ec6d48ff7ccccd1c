import request from 'supertest';
import { LogCapture, usePrivacyHarness } from './support/harness';

/**
 * Credentials and identity numbers in a URL never reach a log line, whatever the parameter is
 * called: the real app with its real logger writing to a stream, the lines read as text.
 */
const log = new LogCapture('debug');
const h = usePrivacyHarness({ logger: log.logger });

const FNR = '13116900216';
const SECRETS = {
  access_token: 'eyJhbGciOiJFUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl',
  apiKey: 'k3y-value-one',
  'X-Api-KEY': 'k3y-value-two',
  client_secret: 's3cret-value',
  Password: 'pa55word-value',
  client_assertion: 'a55ertion-value',
  code: 'c0de-value',
  refreshToken: 'refresh-value',
};

describe('log redaction by rule', () => {
  it('when a URL carries credential-named parameters and identity numbers, then no log line holds them, and other parameters stay', async () => {
    const query = new URLSearchParams({ ...SECRETS, page: 'page-two', [`n${FNR}`]: 'x', who: FNR });
    for (const path of [`/nope/${FNR}`, `/personverninnstillinger/x${FNR}y/v2`]) {
      const before = log.raw.length;
      await request(h.get().app).get(`${path}?${query.toString()}`);
      const text = log.raw.slice(before).join('\n');
      expect(text).toContain('request completed');
      expect(text).toContain('page-two');
      expect(text).not.toContain(FNR);
      for (const value of Object.values(SECRETS)) expect(text).not.toContain(value);
    }
  });
});
