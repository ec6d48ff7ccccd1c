export interface WaitForOptions {
  /** Ends a hung wait, not a measurement: default 15 s. */
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `check` until it returns a truthy value and resolves with it; rejects naming `what` once
 * `timeoutMs` has passed (with the last error `check` threw, if any).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: WaitForOptions = {},
): Promise<T> {
  const end = Date.now() + (options.timeoutMs ?? 15_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > end) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
