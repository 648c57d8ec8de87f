/** A failure the caller can act on. Handlers turn it into `{"error": message}` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message: string) => new ApiError(404, message);
export const forbidden = (message: string) => new ApiError(403, message);

/** Unknown project and project of another owner read the same, so project ids cannot be enumerated. */
export const PROJECT_NOT_FOUND = 'Project not found';
export const INTERNAL_ERROR = 'Internal error';
