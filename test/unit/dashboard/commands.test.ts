import { describe, expect, it } from 'vitest';
import { UsageError } from '#dashboard/args';
import { runCli } from '#dashboard/cli';
import { type Command, parseCommand } from '#dashboard/command';
import { COMMANDS, findCommand } from '#dashboard/commands';
import { auditList } from '#dashboard/commands/audit';
import { discordLink } from '#dashboard/commands/discord';
import { MAX_KEYS_PER_DASHBOARD_ISSUE } from '#dashboard/commands/input';
import { keysIssue } from '#dashboard/commands/keys';
import { ownerCreate } from '#dashboard/commands/owner';
import { projectCreate } from '#dashboard/commands/projects';
import { tokenAudit, tokenCreate, tokenList, tokenMigrate, tokenRevoke } from '#dashboard/commands/tokens';
import { versionsUpload } from '#dashboard/commands/versions';
import { webhooksAdd } from '#dashboard/commands/webhooks';
import { EVENT_NAMES } from '#schemas/resources';

function rejection(command: Command<unknown, object>, argv: string[]): string {
  try {
    parseCommand(command, argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${command.name} ${argv.join(' ')} was accepted`);
}

const PROJECT = ['--project', 'prj_0123456789abcdef0123'];

describe('findCommand', () => {
  it('finds a command by its words and returns the flags after them', () => {
    const { entry, rest } = findCommand(['keys', 'issue', '--project', 'p']);
    expect(entry).toBe(COMMANDS['keys issue']);
    expect(rest).toEqual(['--project', 'p']);
  });

  it('rejects an unknown or missing command, listing the commands', () => {
    expect(() => findCommand(['keys', 'delete'])).toThrow(
      'Unknown command "keys delete"; commands: owner create, token create, project create, keys issue, versions upload, webhooks add',
    );
    expect(() => findCommand(['--project', 'p'])).toThrow(/^No command given; commands: /);
    expect(() => findCommand(['toString'])).toThrow('Unknown command "toString"');
  });

  it('rejects words after a command as unexpected arguments', () => {
    const { entry, rest } = findCommand(['owner', 'create', 'now']);
    expect(() => entry.prepare(rest)).toThrow('Unexpected argument "now" for "owner create"');
  });
});

describe('owner create and token create', () => {
  it('take no flags, and token create requires a well-formed --owner', () => {
    expect(parseCommand(ownerCreate, [])).toEqual({});
    expect(rejection(ownerCreate, ['--owner', 'own_1'])).toMatch(/Unknown flag --owner for "owner create"/);
    expect(parseCommand(tokenCreate, ['--owner', 'own_1'])).toEqual({ ownerId: 'own_1', scope: 'write', limits: {} });
    expect(rejection(tokenCreate, [])).toMatch(/"token create" needs --owner/);
    expect(rejection(tokenCreate, ['--owner', 'own 1'])).toMatch(/--owner must be an owner id like own_/);
    expect(rejection(tokenCreate, ['--owner', ''])).toMatch(/--owner must be an owner id/);
  });

  it('token create takes --scope read or write, write unless given', () => {
    expect(parseCommand(tokenCreate, ['--owner', 'own_1', '--scope', 'read'])).toEqual({ ownerId: 'own_1', scope: 'read', limits: {} });
    expect(parseCommand(tokenCreate, ['--owner', 'own_1', '--scope', 'write'])).toEqual({ ownerId: 'own_1', scope: 'write', limits: {} });
    expect(parseCommand(tokenCreate, ['--owner', 'own_1', '--project', 'prj_1', '--routes', 'issue-keys,get-key'])).toEqual({
      ownerId: 'own_1',
      scope: 'write',
      limits: { projectId: 'prj_1', routes: ['issue-keys', 'get-key'] },
    });
    expect(() => parseCommand(tokenCreate, ['--owner', 'own_1', '--routes', 'issue-keys,drop-table'])).toThrow(
      /--routes must be a comma-separated list of routes: list-keys, issue-keys/,
    );
    expect(rejection(tokenCreate, ['--owner', 'own_1', '--scope', 'admin'])).toBe('--scope must be one of read, write; got "admin"');
    expect(rejection(tokenCreate, ['--owner', 'own_1', '--scope', 'READ'])).toBe('--scope must be one of read, write; got "READ"');
    expect(rejection(tokenCreate, ['--owner', 'own_1', '--scope'])).toMatch(/--scope needs a value \(read\|write\)/);
  });
});

describe('token list, token revoke, token audit and audit list', () => {
  const TOKEN_ID = 'tok_0123456789abcdef0123';

  it('token list requires a well-formed --owner and takes nothing else', () => {
    expect(parseCommand(tokenList, ['--owner', 'own_1'])).toEqual({ ownerId: 'own_1' });
    expect(rejection(tokenList, [])).toMatch(/"token list" needs --owner/);
    expect(rejection(tokenList, ['--owner', 'own_1', '--scope', 'read'])).toMatch(/Unknown flag --scope for "token list"/);
  });

  it('token revoke requires a token id of the form the dashboard prints', () => {
    expect(parseCommand(tokenRevoke, ['--token-id', TOKEN_ID])).toEqual({ tokenId: TOKEN_ID });
    expect(rejection(tokenRevoke, [])).toMatch(/"token revoke" needs --token-id/);
    for (const bad of ['sdt_abc', 'tok_0123', 'tok_0123456789ABCDEF0123', `${TOKEN_ID}0`, 'own_0123456789abcdef0123']) {
      expect(rejection(tokenRevoke, ['--token-id', bad])).toBe(
        `--token-id must be a token id like tok_0123456789abcdef0123 (see "token list --owner ID"); got "${bad}"`,
      );
    }
  });

  it('audit list requires --project and takes --limit from 1 to 1000, 50 unless given', () => {
    expect(parseCommand(auditList, PROJECT)).toEqual({ projectId: PROJECT[1], limit: 50 });
    expect(parseCommand(auditList, [...PROJECT, '--limit', '1000'])).toEqual({ projectId: PROJECT[1], limit: 1000 });
    expect(rejection(auditList, [])).toMatch(/"audit list" needs --project/);
    expect(rejection(auditList, [...PROJECT, '--limit', '0'])).toBe('--limit must be a whole number from 1 to 1000; got "0"');
    expect(rejection(auditList, [...PROJECT, '--limit', '1001'])).toBe('--limit must be a whole number from 1 to 1000; got "1001"');
    expect(rejection(auditList, ['--project', 'prj 1'])).toMatch(/--project must be a project id/);
  });

  it('token migrate takes no flags', () => {
    expect(parseCommand(tokenMigrate, [])).toEqual({});
    expect(rejection(tokenMigrate, ['--owner', 'own_1'])).toMatch(/Unknown flag --owner for "token migrate"/);
  });

  it('token audit requires --owner and takes the same --limit', () => {
    expect(parseCommand(tokenAudit, ['--owner', 'own_1', '--limit', '3'])).toEqual({ ownerId: 'own_1', limit: 3 });
    expect(rejection(tokenAudit, ['--limit', '3'])).toMatch(/"token audit" needs --owner/);
    expect(rejection(tokenAudit, ['--owner', 'own_1', '--limit', 'ten'])).toMatch(/--limit must be a whole number/);
  });
});

describe('project create', () => {
  const owner = ['--owner', 'own_1'];

  it('defaults the plan to business and trims the name', () => {
    expect(parseCommand(projectCreate, [...owner, '--name', '  My Script '])).toEqual({ ownerId: 'own_1', name: 'My Script', plan: 'business' });
    expect(parseCommand(projectCreate, [...owner, '--name', 'S', '--plan', 'free']).plan).toBe('free');
  });

  it.each([
    [['--name', 'S'], /needs --owner/],
    [['--owner', 'own_1'], /needs --name/],
    [[...owner, '--name', '   '], /--name must not be empty/],
    [[...owner, '--name', 'x'.repeat(101)], /--name must be at most 100 characters; got 101/],
    [[...owner, '--name', 'bad\u0007name'], /--name must be printable text: it holds U\+0007/],
    [[...owner, '--name', 'exe\u202Etxt.exe'], /--name must be printable text: it holds U\+202E/],
    [[...owner, '--name', 'S', '--plan', 'enterprise'], /--plan must be one of business, pro, free; got "enterprise"/],
  ])('rejects %j', (argv, message) => {
    expect(rejection(projectCreate, argv)).toMatch(message);
  });
});

describe('keys issue', () => {
  it('defaults to one standard key with no use cap and the default expiry', () => {
    expect(parseCommand(keysIssue, PROJECT)).toEqual({ projectId: PROJECT[1], count: 1, tier: 'standard', maxUses: null, maxFingerprints: null });
  });

  it('reads every optional flag', () => {
    const argv = [
      ...PROJECT,
      ...['--count', '5', '--watermark', '0123456789abcdef', '--tier', 'standard', '--max-uses', '3', '--expires-at', '1700000000'],
      ...['--max-fingerprints', '2', '--note', 'SellAuth 48213', '--discord-id', '123456789012345678'],
    ];
    expect(parseCommand(keysIssue, argv)).toEqual({
      projectId: PROJECT[1],
      count: 5,
      watermark: '0123456789abcdef',
      tier: 'standard',
      maxUses: 3,
      expiresAt: 1_700_000_000,
      maxFingerprints: 2,
      note: 'SellAuth 48213',
      discordId: '123456789012345678',
    });
  });

  it.each([
    [[], /needs --project/],
    [['--project', '../etc'], /--project must be a project id like prj_/],
    [[...PROJECT, '--count', '0'], /--count must be a whole number from 1 to 10000; got "0"/],
    [[...PROJECT, '--count', String(MAX_KEYS_PER_DASHBOARD_ISSUE + 1)], /--count must be a whole number from 1 to 10000/],
    [[...PROJECT, '--count', 'ten'], /--count must be a whole number/],
    [[...PROJECT, '--count', '2.5'], /--count must be a whole number/],
    [[...PROJECT, '--watermark', 'WM_0123456789abcdef'], /--watermark must be the 16 hex characters after the WM_ prefix/],
    [[...PROJECT, '--watermark', '0123456789ABCDEF'], /--watermark must be lowercase hex/],
    [[...PROJECT, '--watermark', 'abc'], /--watermark must be exactly 16 lowercase hex characters/],
    [[...PROJECT, '--tier', 'gold'], /--tier must be one of standard; got "gold"/],
    [[...PROJECT, '--max-uses', '0'], /--max-uses must be a whole number from 1/],
    [[...PROJECT, '--max-uses', '-3'], /--max-uses must be a whole number/],
    [[...PROJECT, '--expires-at', '1700000000000'], /--expires-at must be a whole number from 1 to 99999999999/],
    [[...PROJECT, '--expires-at', 'tomorrow'], /--expires-at must be a whole number/],
    [[...PROJECT, '--max-fingerprints', '0'], /--max-fingerprints must be a whole number from 1 to 10/],
    [[...PROJECT, '--max-fingerprints', '11'], /--max-fingerprints must be a whole number from 1 to 10/],
    [[...PROJECT, '--note', 'n'.repeat(256)], /--note must be at most 255 characters/],
    [[...PROJECT, '--discord-id', '12345'], /--discord-id must be a Discord user id: 17 to 20 digits/],
  ])('rejects %j', (argv, message) => {
    expect(rejection(keysIssue, argv)).toMatch(message);
  });
});

describe('versions upload', () => {
  it('requires a file and defaults the notes to the empty string', () => {
    expect(parseCommand(versionsUpload, [...PROJECT, '--file', 'script.luau'])).toEqual({ projectId: PROJECT[1], file: 'script.luau', notes: '' });
    expect(parseCommand(versionsUpload, [...PROJECT, '--file', 'script.luau', '--notes', 'Fixes']).notes).toBe('Fixes');
  });

  it.each([
    [[...PROJECT], /needs --file/],
    [[...PROJECT, '--size-bytes', '1'], /Unknown flag --size-bytes/],
    [[...PROJECT, '--file', 'a.luau', '--notes', 'n'.repeat(1025)], /--notes must be at most 1024 characters/],
    [[...PROJECT, '--file', 'a.luau', '--notes', 'a\u0000b'], /--notes must be printable text: it holds U\+0000/],
    [[...PROJECT, '--file', 'a.luau', '--notes', 'a\u2066b\u2069'], /--notes must be printable text: it holds U\+2066/],
  ])('rejects %j', (argv, message) => {
    expect(rejection(versionsUpload, argv)).toMatch(message);
  });
});

describe('webhooks add', () => {
  const url = ['--url', 'https://discord.com/api/webhooks/123/abc'];

  it('reads the events in order without repeats, enabled unless --disabled', () => {
    expect(parseCommand(webhooksAdd, [...PROJECT, ...url, '--events', 'key_abuse, version_deployed,key_abuse'])).toEqual({
      projectId: PROJECT[1],
      url: url[1],
      events: ['key_abuse', 'version_deployed'],
      enabled: true,
    });
    expect(parseCommand(webhooksAdd, [...PROJECT, ...url, '--events', EVENT_NAMES.join(','), '--disabled']).enabled).toBe(false);
  });

  it.each([
    [[...PROJECT, '--events', 'key_abuse'], /needs --url/],
    [[...PROJECT, ...url], /needs --events/],
    [
      [...PROJECT, '--url', 'discord.com/api/webhooks/1/a', '--events', 'key_abuse'],
      /--url must be a Discord webhook URL, https:\/\/discord\.com\/api\/webhooks\/ID\/TOKEN/,
    ],
    [[...PROJECT, '--url', 'ftp://example.com/x', '--events', 'key_abuse'], /--url must be a Discord webhook URL/],
    [[...PROJECT, '--url', 'http://discord.com/api/webhooks/1/a', '--events', 'key_abuse'], /--url must be a Discord webhook URL/],
    [
      [...PROJECT, '--url', 'http://127.0.0.1:3000/_local/discord/webhooks/1/secret', '--events', 'key_abuse'],
      /inbox of npm start\); got http:\/\/127\.0\.0\.1:3000\/\[redacted\]$/,
    ],
    [[...PROJECT, '--url', `https://example.com/${'a'.repeat(2048)}`, '--events', 'key_abuse'], /--url must be at most 2048 characters/],
    [[...PROJECT, ...url, '--events', 'key_abuse,deploy'], /Unknown event "deploy" in --events; events: execution_drop, new_executor/],
    [[...PROJECT, ...url, '--events', 'key_abuse,,new_executor'], /--events must be a comma-separated list/],
    [[...PROJECT, ...url, '--events', ''], /--events must be a comma-separated list/],
  ])('rejects %j', (argv, message) => {
    expect(rejection(webhooksAdd, argv)).toMatch(message);
  });
});

describe('discord link', () => {
  const RFC8032_KEY = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';

  it('takes an Ed25519 public key of full order', () => {
    expect(parseCommand(discordLink, [...PROJECT, '--public-key', RFC8032_KEY])).toEqual({ projectId: PROJECT[1], publicKey: RFC8032_KEY });
  });

  it.each([
    [`01${'00'.repeat(31)}`, /^--public-key is a point of small order/],
    ['26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', /^--public-key is a point of small order/],
    [`ed${'ff'.repeat(30)}7f`, /^--public-key is not the canonical encoding/],
    ['abc', /^--public-key must be .*64 hex characters/],
  ])('refuses --public-key %s naming the flag', (key, message) => {
    expect(rejection(discordLink, [...PROJECT, '--public-key', key])).toMatch(message);
  });

  it('exits 2 naming --public-key for a small-order key, before looking for a table', async () => {
    const stderr: string[] = [];
    const code = await runCli({
      argv: ['discord', 'link', ...PROJECT, '--public-key', `01${'00'.repeat(31)}`],
      env: {},
      stateFile: '/nonexistent/stack.json',
      stdout: () => undefined,
      stderr: (text) => stderr.push(text),
    });
    expect(code).toBe(2);
    expect(stderr.join('')).toMatch(/^--public-key is a point of small order/);
  });
});

describe('runCli on bad input', () => {
  it('exits 2 with one line on stderr and nothing on stdout, before looking for a table', async () => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli({
      argv: ['keys', 'issue', '--project', 'prj_1', '--count', '0'],
      env: {},
      stateFile: '/nonexistent/stack.json',
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
    });
    expect(code).toBe(2);
    expect(stdout).toEqual([]);
    expect(stderr).toEqual(['--count must be a whole number from 1 to 10000; got "0"\n']);
  });

  it('prints the usage of every command on stdout for help', async () => {
    const stdout: string[] = [];
    const code = await runCli({ argv: ['help'], env: {}, stdout: (text) => stdout.push(text), stderr: () => undefined });
    expect(code).toBe(0);
    for (const command of Object.values(COMMANDS)) expect(stdout.join('')).toContain(command.usage);
    expect(stdout.join('')).toContain('webhooks add --project ID --url https://discord.com/api/webhooks/ID/TOKEN --events e1,e2');
  });

  it('on a Node older than 22 exits 1 saying what to do, before running the command', async () => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli({
      argv: ['owner', 'create'],
      env: {},
      nodeVersion: '20.20.2',
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
    });
    expect(code).toBe(1);
    expect(stdout).toEqual([]);
    expect(stderr.join('')).toBe(
      "The dashboard CLI needs Node 22 or newer (the Lambda runtime's version); this is Node 20.20.2: run nvm use (or fnm use; .nvmrc names the version), or install Node 22 from https://nodejs.org.\n",
    );
  });
});
