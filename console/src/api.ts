/**
 * The console's one way to reach its server: same origin, the session cookie (never a token in script), JSON in
 * and out. A failure becomes an ApiError carrying the server's own `{"error"}` sentence.
 */

/** `/console/api` beside the page, wherever the console is served (`/console/` locally and behind CloudFront). */
export function apiBase(): string {
  const path = window.location.pathname;
  return `${path.slice(0, path.lastIndexOf('/') + 1)}api`;
}

/** The 404 of a project that is not the owner's, or none (DESIGN.md): other 404s are of a route or a thing in it. */
export const PROJECT_NOT_FOUND = 'Project not found';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const sessionEndedListeners = new Set<Listener>();

/** Told when an answer says the session is gone (401), so the app can show sign-in again. */
export function onSessionEnded(listener: Listener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

async function errorOf(response: Response): Promise<ApiError> {
  let message = `The console's server answered ${response.status} ${response.statusText}`;
  try {
    const body: unknown = await response.json();
    if (typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string') message = (body as { error: string }).error;
  } catch {
    // Not JSON (a proxy's page): the status line says enough.
  }
  return new ApiError(response.status, message);
}

export interface RequestOptions {
  body?: unknown;
  /** A text body (a leaked dump), sent as `text/plain` instead of JSON. */
  text?: string;
  /** Sign-in and the session check answer 401 as a result, not as a session that ended. */
  quietUnauthorized?: boolean;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${apiBase()}${path}`, {
      method,
      credentials: 'same-origin',
      headers:
        options.text !== undefined
          ? { Accept: 'application/json', 'Content-Type': 'text/plain; charset=utf-8' }
          : options.body === undefined
            ? { Accept: 'application/json' }
            : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: options.text ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
  } catch {
    throw new ApiError(0, 'The console cannot reach its server: check the connection and try again');
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && !options.quietUnauthorized) for (const listener of sessionEndedListeners) listener();
    throw error;
  }
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, { body: body ?? {} });

/** The owner API's routes, mirrored under the console (`/console/api/v1/projects/{id}/…`). */
export function ownerPath(projectId: string, rest: string): string {
  return `/v1/projects/${encodeURIComponent(projectId)}${rest}`;
}

/** The console's own routes of a project (`/console/api/projects/{id}/…`). */
export function consolePath(projectId: string, rest: string): string {
  return `/projects/${encodeURIComponent(projectId)}${rest}`;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
