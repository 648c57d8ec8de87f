import { spawnSync } from 'node:child_process';
import type { HttpReply, HttpRequest } from './roblox';

/**
 * An executor's request function is synchronous to the script; the VM calls it from JavaScript that cannot wait
 * for a promise. So the request is made by a child Node process, which this one waits for: slow (tens of ms), and
 * fine for a tool that shows one run.
 */
const CHILD = `
const request = JSON.parse(process.argv[1]);
fetch(request.Url, { method: request.Method, headers: request.Headers, body: request.Body })
  .then(async (response) => {
    const body = await response.text();
    process.stdout.write(JSON.stringify({ StatusCode: response.status, StatusMessage: response.statusText, Headers: Object.fromEntries(response.headers), Body: body }));
  })
  .catch((error) => process.stdout.write(JSON.stringify({ raise: 'HttpError: ' + (error.cause?.code ?? error.message) })));
`;

export function requestSync(request: HttpRequest): HttpReply {
  const child = spawnSync(process.execPath, ['-e', CHILD, JSON.stringify(request)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 30_000 });
  if (child.status !== 0 || !child.stdout) return { raise: `HttpError: ${child.error?.message ?? child.stderr.trim() ?? 'no answer'}` };
  return JSON.parse(child.stdout) as HttpReply;
}
