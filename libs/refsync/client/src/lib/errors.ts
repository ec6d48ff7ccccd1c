import type { ProblemDetails } from '@nhp/refsync-contracts';

/** The service answered with an error status; `problem` is its RFC 9457 body when it sent one. */
export class RefsyncApiError extends Error {
  override readonly name = 'RefsyncApiError';

  constructor(
    readonly status: number,
    readonly problem: ProblemDetails | undefined,
    readonly url: string,
  ) {
    super(
      `refsync-api answered ${status} for ${url}${problem ? `: ${problem.detail || problem.title}` : ''}`,
    );
  }
}

/** The service answered 200 with a body that does not match the contract. */
export class RefsyncProtocolError extends Error {
  override readonly name = 'RefsyncProtocolError';

  constructor(
    message: string,
    readonly url: string,
  ) {
    super(`${message} (${url})`);
  }
}
