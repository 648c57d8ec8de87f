import type { IncomingMessage, ServerResponse } from 'node:http';

/** Serves a path under `/_local/` and resolves true, or resolves false to let the next one try. */
export type LocalExtension = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;
