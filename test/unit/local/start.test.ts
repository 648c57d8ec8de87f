import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDiscordStandIn } from '#local/discord-stand-in';
import type { LocalStack } from '#local/stack';
import { banner, DEFAULT_PERSIST_DIR, loggedPath, parseStartArgs } from '#local/start';

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
  it('prints the base URL, the token, the project and ready curl lines for keys, versions, a bulk revoke and a key check', () => {
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
      sharedWatermark: '0123456789abcdef',
      demoKey: 'sdk_demo',
      discord: createDiscordStandIn(),
      stateFile: resolve('.local/stack.json'),
      reusedDemo: false,
      stop: async () => undefined,
    };
    const text = banner(stack, undefined);
    expect(text).toContain('Base URL    http://127.0.0.1:3000');
    expect(text).toContain('Token       sdt_abc');
    expect(text).toContain("curl -s -H 'Authorization: Bearer sdt_abc' 'http://127.0.0.1:3000/v1/projects/prj_1/keys?limit=5'");
    expect(text).toContain("curl -s -H 'Authorization: Bearer sdt_abc' 'http://127.0.0.1:3000/v1/projects/prj_1/versions'");
    expect(text).toContain(
      `curl -s -X POST -H 'Authorization: Bearer sdt_abc' -H 'Content-Type: application/json' -d '{"watermark":"0123456789abcdef"}' 'http://127.0.0.1:3000/v1/projects/prj_1/keys/revoke-bulk'`,
    );
    const fingerprint = createHash('sha256').update('demo-machine').digest('hex');
    expect(text).toContain(
      `curl -s -X POST -H 'Content-Type: application/json' -d '{"project_id":"prj_1","key":"sdk_demo","fingerprint":"${fingerprint}","executor":"curl"}' 'http://127.0.0.1:3000/v1/loader/validate'`,
    );
  });
});

describe('request log', () => {
  it('never prints the webhook token of a delivery to the Discord stand-in', () => {
    expect(loggedPath('/_local/discord/webhooks/1023707647729628167/m9PLurjq-secret?wait=true')).toBe('/_local/discord/webhooks/1023707647729628167/****?wait=true');
    expect(loggedPath('/v1/projects/prj_1/keys')).toBe('/v1/projects/prj_1/keys');
  });
});
