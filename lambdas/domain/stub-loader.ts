import { createHash } from 'node:crypto';

/**
 * The stub loader buyers run (examples/roblox-loader.luau) with its STUB_SETTINGS filled in: the hosted stub of
 * `GET /v1/loader/stub/{project_id}` (DESIGN.md, "Buyers help themselves in Discord") and `npm run loader`.
 */

/** The stub with its STUB_SETTINGS lines set, as a publisher edits them before handing it out. */
export function configuredStub(source: string, settings: Record<string, string | boolean>): string {
  let configured = source;
  for (const [name, value] of Object.entries(settings)) {
    const line = new RegExp(`^(\\t${name} = ).*,$`, 'm');
    if (!line.test(configured)) throw new Error(`The stub loader has no STUB_SETTINGS line for ${name}`);
    // A JSON string is a valid Lua string literal for the ids and URLs set here (no control characters).
    configured = configured.replace(line, (_match, start: string) => `${start}${JSON.stringify(value)},`);
  }
  return configured;
}

/** The hosted stub of a project: its id and the loader routes' base URL filled in, and its strong ETag. */
export function hostedStub(source: string, projectId: string, loaderBaseUrl: string): { body: string; etag: string } {
  const body = configuredStub(source, { api_base_url: loaderBaseUrl, project_id: projectId });
  return { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` };
}
