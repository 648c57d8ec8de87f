import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type LocalServer, NOT_LOOPBACK_HOST, startLocalServer } from '#local/server';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { createTestTable, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * DNS rebinding: a web page on a name the attacker controls, re-pointed at 127.0.0.1, reaches a local server from
 * the browser with its own name in `Host`. Both servers the local stack starts (the API server and DynamoDB Local)
 * answer only a loopback Host.
 */
let table: TestTable;
let telemetry: TelemetryPipeline;
let server: LocalServer;

beforeAll(async () => {
  table = await createTestTable('loopback-hosts');
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts: new MemoryScriptStore() });
});

afterAll(async () => {
  await server.close();
  await telemetry.stop();
  await table.drop();
});

/** One request to 127.0.0.1:port with the given Host header (fetch does not let a caller choose it). */
function withHost(
  port: number,
  host: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, method, path, headers: { ...headers, Host: host } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

const FOREIGN_HOSTS = (port: number) => [
  'evil.example',
  `evil.example:${port}`,
  `127.0.0.1.nip.io:${port}`,
  `localhost.evil.example:${port}`,
  `127.0.0.1:${port}@evil.example`,
];
const LOOPBACK_HOSTS = (port: number) => [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost'];

describe('the local API server and a Host header', () => {
  it('refuses every request whose Host is not a loopback name with 403, before any route or token is looked at', async () => {
    for (const host of FOREIGN_HOSTS(server.port)) {
      for (const path of ['/v1/projects/prj_x/keys', '/_local/inbox', '/v1/loader/validate']) {
        const reply = await withHost(server.port, host, 'GET', path);
        expect({ host, path, status: reply.status, body: JSON.parse(reply.body) as unknown }).toEqual({
          host,
          path,
          status: 403,
          body: { error: NOT_LOOPBACK_HOST },
        });
      }
    }
  });

  it('answers localhost, 127.0.0.1 and [::1] as before', async () => {
    for (const host of LOOPBACK_HOSTS(server.port)) {
      const reply = await withHost(server.port, host, 'GET', '/v1/projects/prj_x/keys');
      expect({ host, status: reply.status }).toEqual({ host, status: 401 });
    }
  });
});

describe('DynamoDB Local and a Host header', () => {
  const port = Number(new URL(inject('dynamodbEndpoint')).port);
  const listTables = (host: string) =>
    withHost(
      port,
      host,
      'POST',
      '/',
      {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      '{"Limit":1}',
    );

  it.runIf(inject('dynamodbStartedByRun'))('refuses a foreign Host with 403 and serves a loopback one', async () => {
    // Jetty itself answers 400 to a Host it cannot parse (`...@evil.example`); the launcher's check answers 403 to the rest.
    for (const host of FOREIGN_HOSTS(port)) expect({ host, status: (await listTables(host)).status }).toEqual({ host, status: host.includes('@') ? 400 : 403 });
    for (const host of LOOPBACK_HOSTS(port)) expect({ host, status: (await listTables(host)).status }).toEqual({ host, status: 200 });
  });
});
