/** What the faults of process-faults.ts carry that a log line must never show. */
export const FAULT_SECRETS = {
  /** A valid-looking fødselsnummer. */
  fnr: '13116900216',
  /** A JWT-shaped token. */
  token: 'eyJhbGciOiJSUzI1NiJ9.eyJjbGllbnRfaWQiOiJmYXVsdCJ9.ZmF1bHQtc2lnbmF0dXJl',
} as const;
