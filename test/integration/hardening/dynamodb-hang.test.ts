import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION_TIMEOUT_SECONDS } from '#http/routes';
import type { RequestLogEntry } from '#local/server';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint } from '#test-support/fixtures';
import { freePort, type PausableProxy, rawRequest, reportFigure, startPausableProxy } from '#test-support/hardening';

/**
 * The local stack with its database hanging: connections accepted, nothing answered (a paused JVM, a network
 * black hole). The table client has no timeout of its own, so what bounds a request is the deployed function
 * timeout the gateway enforces; the caller must get the gateway's JSON 500 then, and the stack must serve again
 * once the database answers.
 */

let proxy: PausableProxy;
let stack: LocalStack;
let port: number;
const requestLog: RequestLogEntry[] = [];

beforeAll(async () => {
  proxy = await startPausableProxy(Number(new URL(dynamodbEndpoint()).port));
  port = await freePort();
  stack = await startLocalStack({
    port,
    dynamodbEndpoint: proxy.endpoint,
    tableName: `hang-${Date.now()}`,
    stateFile: join(tmpdir(), `hang-${process.pid}.json`),
    onRequest: (entry) => requestLog.push(entry),
  });
}, 120_000);

afterAll(async () => {
  // Whatever is still waiting on the database must finish before the stack can stop.
  proxy?.resume();
  await stack?.stop();
  await proxy?.close();
});

const listVersions = () =>
  rawRequest(port, {
    method: 'GET',
    target: `/v1/projects/${stack.projectId}/versions`,
    headers: [['Authorization', `Bearer ${stack.token}`]],
    timeoutMs: 60_000,
  });

describe('DynamoDB hanging under the local stack', () => {
  it('answers the gateway JSON 500 once the function timeout passes, then serves again when the database answers', async () => {
    expect((await listVersions()).status).toBe(200);

    proxy.pause();
    const started = performance.now();
    const whileHung = await listVersions();
    const waitedMs = Math.round(performance.now() - started);
    proxy.resume();

    expect(whileHung.status).toBe(500);
    expect(whileHung.json).toEqual({ error: 'Internal error', request_id: expect.any(String) });
    expect(whileHung.headers).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    // What ended the request is the deployed function timeout, as Lambda would: not another error, not a client giving up.
    const entry = requestLog.find((logged) => logged.requestId === (whileHung.json as { request_id: string }).request_id);
    expect(String(entry?.failure)).toContain(`Task timed out after ${API_FUNCTION_TIMEOUT_SECONDS} seconds`);
    expect((await listVersions()).status).toBe(200);
    reportFigure(
      `DynamoDB hanging: request answered JSON 500 after ${waitedMs} ms (function timeout ${API_FUNCTION_TIMEOUT_SECONDS} s), 200 again once it answers`,
    );
  });
});
