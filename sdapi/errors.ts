/**
 * Exit codes, so a script can tell what went wrong without reading the message:
 * 0 done; 1 the API (or the network) failed; 2 the command line or the configuration is wrong;
 * 3 `leak` found no valid watermark in the dump; 4 `leak` was not confirmed at the prompt.
 */
export const EXIT = { ok: 0, apiError: 1, usage: 2, noWatermark: 3, declined: 4 } as const;

/** The command line or the configuration is wrong; the message says what to change. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The API answered with an error (or could not be reached); `message` is the API's own `error` text. */
export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    message: string,
    /** HTTP status, or undefined when no answer came. */
    readonly status: number | undefined,
    /** `METHOD /path` of the failed request (paths carry no secret). */
    readonly request: string,
  ) {
    super(message);
  }
}
