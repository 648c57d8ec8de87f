import { beforeEach, describe, expect, it } from 'vitest';
import { RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { BASE_URL, PROJECT_ID, runCli, TOKEN } from '#test-support/sdapi-run-cli';
import { makeKey, makeVersion, makeWebhook, StandInApi } from '#test-support/sdapi-stand-in-api';
import { EXIT } from '../../../sdapi/errors';

let api: StandInApi;

beforeEach(() => {
  const versions = [makeVersion(3, { notes: 'Fix the teleport cooldown' }), makeVersion(2), makeVersion(1, { notes: '' })];
  api = new StandInApi({
    token: TOKEN,
    projectId: PROJECT_ID,
    keys: [
      makeKey({ watermark: '3f9a1c7e5b2d8046', current_uses: 12 }),
      makeKey({ watermark: '3f9a1c7e5b2d8046', max_uses: 500, current_uses: 500, revoked: 1 }),
      makeKey({ watermark: 'b41e07d93ac2f865' }),
    ],
    versions,
    currentVersionId: versions[0]!.id,
    webhooks: [makeWebhook(), makeWebhook({ id: 'whk_00000000000000000002', enabled: 0, events: '[]' })],
  });
});

describe('text from the API reaches the terminal inert (issue 33 item 5)', () => {
  const hostile = 'ok\u001b]52;c;cGF3bmVk\u0007\u001b[2K\u009b31mred';
  const controls = /(?![\t\n])\p{Cc}/u;

  it('prints every control character of a version note as a visible escape, in tables and errors alike', async () => {
    api.versions[0]!.notes = hostile;
    const result = await runCli(['versions', 'list'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).not.toMatch(controls);
    expect(result.stdout).toContain('ok\\u001b]52;c;cGF3bmVk\\u0007\\u001b[2K\\u009b31mred');
  });

  it('keeps --json valid and the value intact while no raw control character is printed', async () => {
    api.versions[0]!.notes = hostile;
    const result = await runCli(['versions', 'list', '--json'], { api });
    expect(result.stdout).not.toMatch(controls);
    const parsed = JSON.parse(result.stdout) as { versions: { notes: string }[] };
    expect(parsed.versions.map((version) => version.notes)).toContain(hostile);
  });
});

describe('sdapi keys list', () => {
  it('prints a table of one page and how to get the next one', async () => {
    const result = await runCli(['keys', 'list', '--limit', '2'], { api });
    expect(result.code).toBe(EXIT.ok);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+WATERMARK\s+TIER\s+STATUS\s+USES\s+ISSUED\s+EXPIRES$/);
    expect(lines[1]).toContain(api.keys[0]!.id);
    expect(lines[1]).toMatch(/3f9a1c7e5b2d8046\s+standard\s+active\s+12\/∞\s+2025-11-22 05:20Z/);
    expect(lines[2]).toMatch(/revoked\s+500\/500/);
    expect(lines[3]).toBe('Keys 1-2 of 3. Next page: --offset 2, or --all for every key.');
    expect(api.requests.map((request) => request.query)).toEqual(['?limit=2&offset=0']);
  });

  it('prints the API answer unchanged with --json', async () => {
    const result = await runCli(['keys', 'list', '--offset', '1', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(JSON.parse(result.stdout)).toEqual({ keys: api.keys.slice(1), total: 3 });
    expect(result.stderr).toBe('');
  });

  it('pages through every key 100 at a time with --all', async () => {
    for (let i = 0; i < 247; i++) api.keys.push(makeKey({ revoked: i % 10 === 0 ? 1 : 0 }));
    const result = await runCli(['keys', 'list', '--all', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    const listed = JSON.parse(result.stdout) as { keys: { id: string }[]; total: number };
    expect(listed.total).toBe(250);
    expect(listed.keys.map((key) => key.id)).toEqual(api.keys.map((key) => key.id));
    expect(api.requests.map((request) => request.query)).toEqual(['?limit=100&offset=0', '?limit=100&offset=100', '?limit=100&offset=200']);
  });

  it('draws a progress bar on stderr only when stderr is a terminal', async () => {
    for (let i = 0; i < 150; i++) api.keys.push(makeKey());
    const piped = await runCli(['keys', 'list', '--all'], { api });
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toContain('153 keys: 152 active, 1 revoked.');
    const terminal = await runCli(['keys', 'list', '--all'], { api, stderrIsTTY: true });
    expect(terminal.stderr).toContain('keys [');
    expect(terminal.stderr).toContain('] 153/153');
    expect(terminal.stderr.endsWith('\r\x1b[K')).toBe(true);
  });

  it('refuses a limit the API would refuse, before calling it', async () => {
    const result = await runCli(['keys', 'list', '--limit', '101'], { api });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toBe('sdapi: --limit must be a whole number from 1 to 100\n');
    expect(api.requests).toEqual([]);
  });

  it('refuses --all together with --limit', async () => {
    const result = await runCli(['keys', 'list', '--all', '--limit', '5'], { api });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain('--all pages through every key');
  });
});

describe('sdapi keys revoke and revoke-bulk', () => {
  it('revokes one key', async () => {
    const result = await runCli(['keys', 'revoke', api.keys[0]!.id], { api });
    expect(result).toMatchObject({ code: EXIT.ok, stdout: `Revoked key ${api.keys[0]!.id}.\n`, stderr: '' });
    expect(api.keys[0]!.revoked).toBe(1);
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: `/v1/projects/${PROJECT_ID}/keys/revoke`, body: { key_id: api.keys[0]!.id } });
  });

  it("prints the API's error text and exits 1 when the key does not exist", async () => {
    const result = await runCli(['keys', 'revoke', 'key_missing'], { api });
    expect(result.code).toBe(EXIT.apiError);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`sdapi: Key key_missing not found in this project (HTTP 404, POST /v1/projects/${PROJECT_ID}/keys/revoke)\n`);
  });

  it('revokes every active key with a watermark and prints revoked_count', async () => {
    const result = await runCli(['keys', 'revoke-bulk', '3f9a1c7e5b2d8046'], { api });
    expect(result).toMatchObject({ code: EXIT.ok, stdout: 'Revoked 1 key carrying watermark 3f9a1c7e5b2d8046.\n' });
    const json = await runCli(['keys', 'revoke-bulk', 'b41e07d93ac2f865', '--json'], { api });
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, revoked_count: 1, complete: true });
  });

  it('repeats a bulk revoke the API answered with complete: false until it is complete, and prints the total', async () => {
    const watermark = 'cccccccccccccccc';
    const many = new StandInApi({ token: TOKEN, projectId: PROJECT_ID, keys: Array.from({ length: 7 }, () => makeKey({ watermark })), bulkRevokePerCall: 3 });
    const result = await runCli(['keys', 'revoke-bulk', watermark], { api: many });
    expect(result).toMatchObject({ code: EXIT.ok, stdout: `Revoked 7 keys carrying watermark ${watermark} in 3 calls.\n` });
    expect(result.stderr).toContain('call 1 revoked 3 keys and stopped before its time limit; repeating for the rest');
    expect(many.requests.filter((request) => request.path.endsWith('/keys/revoke-bulk'))).toHaveLength(3);
    expect(many.keys.every((key) => key.revoked === 1)).toBe(true);
  });

  it('refuses a watermark with the WM_ prefix as a usage error, with the fix', async () => {
    const result = await runCli(['keys', 'revoke-bulk', 'WM_3f9a1c7e5b2d8046'], { api });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain('drop the prefix and send "3f9a1c7e5b2d8046"');
    expect(api.requests).toEqual([]);
  });
});

describe('sdapi versions and webhooks', () => {
  it('lists versions with the current one marked and sizes in KB', async () => {
    const result = await runCli(['versions', 'list'], { api });
    expect(result.code).toBe(EXIT.ok);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s+ID\s+VERSION\s+UPLOADED\s+SIZE\s+NOTES$/);
    expect(lines[1]).toMatch(new RegExp(`^\\*\\s+${api.versions[0]!.id}\\s+v3\\s+\\S+ \\S+\\s+40\\.6 KB\\s+Fix the teleport cooldown$`));
    expect(lines[3]).toMatch(/v1\s+\S+ \S+\s+39\.6 KB$/);
  });

  it('rolls back and says which version is current', async () => {
    const target = api.versions[2]!.id;
    const result = await runCli(['versions', 'rollback', target], { api });
    expect(result).toMatchObject({ code: EXIT.ok, stdout: `Current version is now ${target}.\n` });
    expect(api.currentVersionId).toBe(target);
    const missing = await runCli(['versions', 'rollback', 'ver_missing'], { api });
    expect(missing.code).toBe(EXIT.apiError);
    expect(missing.stderr).toContain('Version ver_missing not found in this project (HTTP 404');
  });

  it('lists webhooks with their events and the URL secret masked in the table only', async () => {
    const result = await runCli(['webhooks', 'list'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toMatch(
      /whk_2d8f4a6c0e1b3795c4e8\s+enabled\s+version_deployed,key_abuse\s+https:\/\/discord\.com\/api\/webhooks\/1311223344556677889\/\*\*\*\*/,
    );
    expect(result.stdout).toMatch(/disabled\s+\(none\)/);
    expect(result.stdout).not.toContain('secret-webhook-token-value');
    const json = await runCli(['webhooks', 'list', '--json'], { api });
    expect(JSON.parse(json.stdout)).toEqual({ webhooks: api.webhooks, total: api.webhooks.length });
  });
});

describe('sdapi failures', () => {
  it('exits 2 with the help on stderr when no command is given', async () => {
    const result = await runCli([], { api });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain('Usage: sdapi <command> [options]');
  });

  it('prints the help on stdout and exits 0 for --help', async () => {
    const result = await runCli(['--help'], { api });
    expect(result.code).toBe(EXIT.ok);
    for (const command of [
      'keys list',
      'keys revoke KEY_ID',
      'keys revoke-bulk WATERMARK',
      'versions list',
      'versions rollback VERSION_ID',
      'webhooks list',
      'leak FILE',
    ]) {
      expect(result.stdout).toContain(command);
    }
  });

  it('prints the same help for `sdapi help`, as the dashboard CLI has it', async () => {
    const [help, flag] = [await runCli(['help'], { api }), await runCli(['--help'], { api })];
    expect(help).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(help.stdout).toBe(flag.stdout);
    expect(api.requests).toEqual([]);
  });

  it('exits 2 for an unknown command, a missing argument, or an option of another command', async () => {
    expect(await runCli(['keys', 'delete'], { api })).toMatchObject({
      code: EXIT.usage,
      stderr: 'sdapi: Unknown command "keys delete"; run sdapi --help for the list\n',
    });
    expect(await runCli(['keys', 'revoke'], { api })).toMatchObject({
      code: EXIT.usage,
      stderr: 'sdapi: "keys revoke" takes KEY_ID: sdapi keys revoke KEY_ID\n',
    });
    expect(await runCli(['versions', 'list', '--all'], { api })).toMatchObject({
      code: EXIT.usage,
      stderr: 'sdapi: --all does not apply to "versions list"\n',
    });
    expect((await runCli(['versions', 'list', '--bogus'], { api })).code).toBe(EXIT.usage);
    expect(api.requests).toEqual([]);
  });

  it('exits 2 naming the missing setting when nothing configures the API', async () => {
    const result = await runCli(['versions', 'list'], { api, env: { SDAPI_BASE_URL: BASE_URL, SDAPI_PROJECT: PROJECT_ID } });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toBe('sdapi: No API token: set SDAPI_TOKEN or pass --token TOKEN, or run npm start (the local stack writes .local/stack.json)\n');
  });

  it('takes flags over environment variables', async () => {
    const result = await runCli(['versions', 'list', '--project', 'prj_other', '--json'], { api });
    expect(result.code).toBe(EXIT.apiError);
    expect(result.stderr).toBe('sdapi: Project not found (HTTP 404, GET /v1/projects/prj_other/versions)\n');
  });

  it('exits 1 with the gateway text on a wrong token', async () => {
    const result = await runCli(['webhooks', 'list'], {
      api,
      env: { SDAPI_BASE_URL: BASE_URL, SDAPI_TOKEN: 'sdt_wrong-token-value', SDAPI_PROJECT: PROJECT_ID },
    });
    expect(result.code).toBe(EXIT.apiError);
    expect(result.stderr).toBe(
      `sdapi: Missing or invalid API token: send Authorization: Bearer <API_TOKEN> (HTTP 401, GET /v1/projects/${PROJECT_ID}/webhooks)\n`,
    );
  });
});

describe('sdapi on 429', () => {
  it('waits what Retry-After says, says so on stderr, then succeeds', async () => {
    api.rateLimitQueue.push(7, 3);
    const result = await runCli(['versions', 'list', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(result.sleeps).toEqual([7000, 3000]);
    expect(result.stderr).toBe('sdapi: rate limited (429); waiting 7 s before attempt 2 of 5\nsdapi: rate limited (429); waiting 3 s before attempt 3 of 5\n');
    expect(api.requests).toHaveLength(3);
  });

  it('backs off exponentially when Retry-After is missing', async () => {
    api.rateLimitQueue.push(null, null, null);
    const result = await runCli(['webhooks', 'list', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(result.sleeps).toEqual([1000, 2000, 4000]);
  });

  it("gives up after 5 attempts with the API's rate limit message", async () => {
    api.rateLimitQueue.push(1, 1, 1, 1, 1, 1);
    const result = await runCli(['keys', 'revoke-bulk', '3f9a1c7e5b2d8046'], { api });
    expect(result.code).toBe(EXIT.apiError);
    expect(api.requests).toHaveLength(5);
    expect(result.sleeps).toHaveLength(4);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(`sdapi: ${RATE_LIMIT_MESSAGE} (HTTP 429, POST /v1/projects/${PROJECT_ID}/keys/revoke-bulk)`);
  });

  it('does not wait out a Retry-After longer than two minutes', async () => {
    api.rateLimitQueue.push(3600);
    const result = await runCli(['versions', 'list'], { api });
    expect(result.code).toBe(EXIT.apiError);
    expect(result.sleeps).toEqual([]);
    expect(result.stderr).toContain(`${RATE_LIMIT_MESSAGE}; retry in 3600 s`);
  });
});

describe('the API token', () => {
  it('is sent as a bearer token and never printed, with --verbose, on success or on failure', async () => {
    api.rateLimitQueue.push(1);
    const runs = [
      await runCli(['keys', 'list', '--all', '--verbose'], { api, stderrIsTTY: true }),
      await runCli(['keys', 'revoke', 'key_missing', '--verbose'], { api }),
      await runCli(['versions', 'list', '--verbose', '--json'], { api }),
      await runCli(['webhooks', 'list', '--verbose', '--token', TOKEN], { api }),
      await runCli(['webhooks', 'list', '--verbose', '--project', 'prj_nope'], { api }),
      await runCli(['webhooks', 'list', '--verbose'], { api, env: { SDAPI_BASE_URL: BASE_URL, SDAPI_TOKEN: `${TOKEN}x`, SDAPI_PROJECT: PROJECT_ID } }),
      await runCli(['webhooks', 'list', '--verbose', '--base-url', 'ftp://example.test'], { api }),
    ];
    expect(runs[0]!.stderr).toContain(`sdapi: -> GET ${BASE_URL}/v1/projects/${PROJECT_ID}/keys?limit=100&offset=0`);
    expect(runs[0]!.stderr).toContain('sdapi: API token from SDAPI_TOKEN');
    for (const run of runs) {
      expect(run.stdout).not.toContain(TOKEN);
      expect(run.stderr).not.toContain(TOKEN);
    }
    expect(new Set(api.requests.map((request) => request.authorization))).toEqual(new Set([`Bearer ${TOKEN}`, `Bearer ${TOKEN}x`]));
  });

  it('is refused unprinted when it has characters no token has', async () => {
    const secret = 'sdt_has spaces and a\nnewline-in-it';
    const result = await runCli(['versions', 'list'], { api, env: { SDAPI_BASE_URL: BASE_URL, SDAPI_TOKEN: secret, SDAPI_PROJECT: PROJECT_ID } });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toBe('sdapi: The API token is malformed: it has characters or a length no API token has\n');
    expect(api.requests).toEqual([]);
  });
});
