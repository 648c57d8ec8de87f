import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import type { Project } from '#domain/model';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createStubHandler, UNKNOWN_PROJECTS } from '#http/loader-stub';
import { STUB_ROUTE } from '#http/public-routes';
import type { HttpReply, HttpRequest } from '#loader-runner/roblox';
import { runInRoblox } from '#loader-runner/roblox';
import { buildHttpApiEvent } from '#local/proxy-event';
import { STUB_LOADER_FILE } from '#local/server';
import { lambdaContext } from '#test-support/fixtures';
import { MemoryStores } from '#test-support/memory-stores';

/**
 * `GET /v1/loader/stub/{project_id}` (DESIGN.md, "Buyers help themselves in Discord"): the stub with the project and
 * the front door's base URL filled in, its ETag and 304, and the 404 of an unknown project; then the buyer's two
 * lines run in the fengari VM, fetching that stub with game:HttpGet and the script with it.
 */

const PROJECT = 'prj_0123456789abcdef0123';
const DOMAIN = 'a1b2c3d4e5.execute-api.us-east-1.amazonaws.com';
const SOURCE = readFileSync(STUB_LOADER_FILE, 'utf8');
let reads = 0;
let now = 1_800_000_000;
const projects = {
  getProject: async (id: string) => {
    reads += 1;
    return id === PROJECT ? ({ id } as Project) : undefined;
  },
};
const handler = createStubHandler({
  projects,
  rateLimits: new MemoryStores(),
  refusals: new RefusalTally(),
  stubSource: SOURCE,
  loaderBaseUrl: (event) => `https://${event.requestContext.domainName}`,
  now: () => now,
  logger: new Logger({ serviceName: 'stub-test', logLevel: 'SILENT' }),
});

async function get(projectId: string, headers: Record<string, string> = {}) {
  const event = buildHttpApiEvent({
    method: 'GET',
    routePath: STUB_ROUTE.path,
    rawPath: `/v1/loader/stub/${projectId}`,
    rawQueryString: '',
    headerPairs: Object.entries(headers),
    body: null,
    isBase64Encoded: false,
    requestId: 'req-stub',
    timeEpoch: 1_800_000_000_000,
    sourceIp: '198.51.100.7',
    stage: '$default',
    accountId: '123456789012',
    apiId: 'a1b2c3d4e5',
    domainName: DOMAIN,
    pathParameters: { project_id: projectId },
  });
  return handler(event, lambdaContext());
}

describe('the hosted stub', () => {
  it("answers the stub as text with this project's id and the front door's base URL in its settings, and an ETag", async () => {
    const response = await get(PROJECT);
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'Content-Type': 'text/plain; charset=utf-8', ETag: expect.stringMatching(/^"[0-9a-f]{32}"$/) });
    expect(response.body).toContain(`\tapi_base_url = "https://${DOMAIN}",`);
    expect(response.body).toContain(`\tproject_id = "${PROJECT}",`);
    expect(response.body.length).toBeGreaterThan(SOURCE.length - 100);
  });

  it('answers 304 without a body to If-None-Match of its ETag, and reads the project once per container', async () => {
    reads = 0;
    const { headers } = await get(PROJECT);
    const again = await get(PROJECT, { 'If-None-Match': String(headers?.ETag) });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(reads).toBeLessThanOrEqual(1);
  });

  it('answers 404 {"error"} for an unknown project, and for an id no project could have', async () => {
    for (const id of ['prj_nothing', 'a%20b']) {
      const response = await get(id);
      expect(response.statusCode).toBe(404);
      expect(JSON.parse(response.body)).toEqual({ error: 'Project not found' });
    }
  });

  it('remembers an id found to be no project: asked again within UNKNOWN_PROJECTS.seconds, it costs no read', async () => {
    reads = 0;
    const id = 'prj_ffffffffffffffffffff';
    for (let ask = 0; ask < 5; ask += 1) expect((await get(id)).statusCode).toBe(404);
    expect(reads).toBe(1);
    now += UNKNOWN_PROJECTS.seconds;
    expect((await get(id)).statusCode).toBe(404);
    expect(reads).toBe(2);
    expect((await get('a%20b')).statusCode).toBe(404);
    expect(reads).toBe(2);
  });
});

describe("the buyer's two lines: script_key, then loadstring(game:HttpGet(stub URL))()", () => {
  it('fetches the hosted stub, which reads the global script_key and fetches the script with it', async () => {
    const stubUrl = `https://${DOMAIN}/v1/loader/stub/${PROJECT}`;
    const stub = await get(PROJECT);
    const sent: HttpRequest[] = [];
    const output: string[] = [];
    const answer = (request: HttpRequest): HttpReply => {
      sent.push(request);
      if (request.Method === 'GET' && request.Url === stubUrl) return { StatusCode: 200, StatusMessage: 'OK', Headers: {}, Body: stub.body };
      return { StatusCode: 200, StatusMessage: 'OK', Headers: { ETag: '"v1"' }, Body: 'print("running, WM_0123456789abcdef")' };
    };
    const result = runInRoblox(`script_key = "sdk_the-buyers-key"\nloadstring(game:HttpGet("${stubUrl}"))()\n`, 'buyer.lua', {
      machineId: 'HWID-1',
      executor: 'Test Executor',
      request: answer,
      wait: () => undefined,
      print: (line) => output.push(line),
    });
    expect(result).toEqual({ ok: true });
    expect(sent.map((request) => `${request.Method} ${request.Url}`)).toEqual([`GET ${stubUrl}`, `POST https://${DOMAIN}/v1/loader/script`]);
    expect(JSON.parse(sent[1]?.Body ?? '{}')).toMatchObject({ project_id: PROJECT, key: 'sdk_the-buyers-key' });
    expect(output).toEqual(['running, WM_0123456789abcdef']);
  });
});
