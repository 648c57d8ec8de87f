import { readFile } from 'node:fs/promises';
import type { DashboardIssuedKey, NewKeys } from '#adapters/dashboard-store';
import type { MigratedToken, TokenSummary } from '#adapters/token-store';
import { discordLink, discordSimulate, discordUnlink } from '#dashboard/commands/discord';
import { detectDaily, telemetryExecution, telemetryValidation } from '#dashboard/commands/telemetry';
import type { AuditEntry } from '#domain/audit';
import { newId } from '#domain/ids';
import { PLANS, type Plan } from '#domain/model';
import { publishScript, scriptFileProblem } from '#domain/scripts';
import { hashToken, newApiToken, TOKEN_ID_PATTERN, TOKEN_SCOPES, type TokenLimits, type TokenScope, tokenIdOf } from '#domain/tokens';
import { DISCORD_WEBHOOK_URL_FORM, webhookUrlProblem } from '#domain/webhooks/discord-webhook-url';
import { ROUTES } from '#http/routes';
import { PATH_ID_PATTERN, printableTextProblem, watermarkProblem } from '#schemas/formats';
import { DISCORD_USER_ID, MAX_FINGERPRINTS, MAX_NOTE_LENGTH } from '#schemas/requests';
import { EVENT_NAMES, type EventName } from '#schemas/resources';
import { type FlagSpecs, type Flags, oneOf, parseFlags, UsageError, usageLine, wholeNumber } from './args';
import { audited, DASHBOARD_AUDITS } from './audited';
import { CommandError, type DashboardContext, oneLine } from './context';

/**
 * The dashboard's commands. Each is pure argument checking (`validate`: flags → input, throws UsageError)
 * then `run`: the reads that must pass (owner, project exist) and only then the writes, so bad input of
 * any kind writes nothing. Tests call `parseCommand` and `run` directly; cli.ts adds argv, stdout and exit.
 */
export interface Command<Input, Result extends object> {
  name: string;
  flags: FlagSpecs;
  validate(flags: Flags): Input;
  run(context: DashboardContext, input: Input): Promise<Result>;
}

export function parseCommand<Input>(command: Command<Input, object>, argv: readonly string[]): Input {
  return command.validate(parseFlags(command.name, argv, command.flags));
}

// ---- limits of the dashboard's input ----

/** Keys one `keys issue` call may create: enough for any real batch, small enough to print. */
export const MAX_KEYS_PER_DASHBOARD_ISSUE = 10_000;
export const MAX_PROJECT_NAME_LENGTH = 100;
/** A Discord embed field value holds 1024 characters; the notes are shown in one. */
export const MAX_VERSION_NOTES_LENGTH = 1024;
/** Spec §2.1 shows no tier but `standard`. */
export const KEY_TIERS = ['standard'] as const;
/** Past this a timestamp is in milliseconds, not the Unix seconds the API uses. */
const MAX_UNIX_SECONDS = 99_999_999_999;
/** Audit entries one `audit list` prints: the newest 50 unless asked, at most 1,000. */
export const AUDIT_LIST_LIMIT = { default: 50, max: 1000 } as const;

function idFlag(flag: string, text: string, what: string, example: string): string {
  if (!PATH_ID_PATTERN.test(text)) throw new UsageError(`--${flag} must be ${what} id like ${example}; got "${text}"`);
  return text;
}

const ownerId = (flags: Flags) => idFlag('owner', flags.required('owner'), 'an owner', 'own_0123456789abcdef0123');
const projectId = (flags: Flags) => idFlag('project', flags.required('project'), 'a project', 'prj_0123456789abcdef0123');

function tokenId(flags: Flags): string {
  const text = flags.required('token-id');
  if (!TOKEN_ID_PATTERN.test(text))
    throw new UsageError(`--token-id must be a token id like tok_0123456789abcdef0123 (see "token list --owner ID"); got "${text}"`);
  return text;
}

function auditLimit(flags: Flags): number {
  const text = flags.optional('limit');
  return text === undefined ? AUDIT_LIST_LIMIT.default : wholeNumber('limit', text, { min: 1, max: AUDIT_LIST_LIMIT.max });
}

function printableText(flag: string, text: string, maxLength: number, options: { allowEmpty: boolean }): string {
  if (!options.allowEmpty && text.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  // Bidirectional overrides would reorder the text around them where it is shown (the Discord embeds of names and notes).
  const problem = printableTextProblem(text, maxLength);
  if (problem) throw new UsageError(`--${flag} ${problem}`);
  return text;
}

function discordUserId(text: string): string {
  if (!DISCORD_USER_ID.test(text)) throw new UsageError(`--discord-id must be a Discord user id: 17 to 20 digits; got "${text}"`);
  return text;
}

function watermark(text: string): string {
  const problem = watermarkProblem(text);
  if (problem) throw new UsageError(`--${problem}`);
  return text;
}

function webhookUrl(text: string): string {
  const problem = webhookUrlProblem(text);
  if (problem) throw new UsageError(`--url ${problem}`);
  return text;
}

/** `e1,e2` → the distinct event names, in the order given. */
function eventList(text: string): EventName[] {
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) throw new UsageError(`--events must be a comma-separated list of ${EVENT_NAMES.join(', ')}; got "${text}"`);
  const unknown = names.filter((name) => !(EVENT_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`Unknown event ${unknown.map((n) => `"${n}"`).join(', ')} in --events; events: ${EVENT_NAMES.join(', ')}`);
  return [...new Set(names as EventName[])];
}

async function requireOwner(context: DashboardContext, owner: string): Promise<void> {
  if (!(await context.stores.dashboard.ownerExists(owner))) throw new CommandError(`Owner ${owner} not found: create one with "owner create"`);
}

async function requireProject(context: DashboardContext, project: string): Promise<void> {
  if (!(await context.stores.projects.getProject(project))) throw new CommandError(`Project ${project} not found: create one with "project create"`);
}

/**
 * A new token for an owner: registered at the gateway first, so a failure there leaves the table untouched. The
 * raw token is in the answer, this once; the table keeps its hash, its id and the owner's audit entry.
 */
async function issueToken(
  context: DashboardContext,
  owner: string | undefined,
  scope: TokenScope,
  limits: TokenLimits = {},
): Promise<{ ownerId: string; token: string; tokenId: string }> {
  await context.tokenKeys.check();
  const token = newApiToken();
  const tokenHash = hashToken(token);
  const tokenId = tokenIdOf(tokenHash);
  await context.tokenKeys.register({ tokenHash, tokenId });
  const now = context.now();
  const tokenOwner = owner ?? (await context.stores.dashboard.createOwner(now));
  await context.stores.tokens.saveTokenHash(tokenOwner, tokenHash, now, scope, limits);
  return { ownerId: tokenOwner, token, tokenId };
}

// ---- the commands ----

export const ownerCreate: Command<Record<string, never>, { ownerId: string; token: string; tokenId: string }> = {
  name: 'owner create',
  flags: {},
  validate: () => ({}),
  run: (context) => issueToken(context, undefined, 'write'),
};

/**
 * Rotation: create the new token, move the clients to it, revoke the old one. `--project` and `--routes` limit it
 * (TokenLimits): a shop's delivery hook gets `--project ID --routes issue-keys` and can do nothing else.
 */
export const tokenCreate: Command<
  { ownerId: string; scope: TokenScope; limits: TokenLimits },
  { token: string; tokenId: string; scope: TokenScope; project?: string; routes?: readonly string[] }
> = {
  name: 'token create',
  flags: {
    owner: { required: true, placeholder: 'ID' },
    scope: { placeholder: TOKEN_SCOPES.join('|') },
    project: { placeholder: 'ID' },
    routes: { placeholder: 'ROUTE,ROUTE' },
  },
  validate: (flags) => {
    const project = flags.optional('project');
    const routes = flags.optional('routes');
    return {
      ownerId: ownerId(flags),
      scope: oneOf('scope', flags.optional('scope') ?? 'write', TOKEN_SCOPES),
      limits: {
        ...(project !== undefined && { projectId: idFlag('project', project, 'a project', 'prj_0123456789abcdef0123') }),
        ...(routes !== undefined && { routes: routeList(routes) }),
      },
    };
  },
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    const { projectId } = input.limits;
    if (projectId !== undefined && (await context.stores.projects.getProject(projectId))?.ownerId !== input.ownerId)
      throw new CommandError(`Project ${projectId} is not a project of owner ${input.ownerId}`);
    const { token, tokenId } = await issueToken(context, input.ownerId, input.scope, input.limits);
    return {
      token,
      tokenId,
      scope: input.scope,
      ...(projectId !== undefined && { project: projectId }),
      ...(input.limits.routes !== undefined && { routes: input.limits.routes }),
    };
  },
};

/** `issue-keys,get-key` → owner API route entries (lambdas/http/routes.ts), each known, in the order given. */
function routeList(text: string): string[] {
  const entries: readonly string[] = ROUTES.map((route) => route.entry);
  const names = [...new Set(text.split(',').map((name) => name.trim()))];
  const unknown = names.filter((name) => !entries.includes(name));
  if (names.length === 0 || unknown.length > 0) throw new UsageError(`--routes must be a comma-separated list of routes: ${entries.join(', ')}; got "${text}"`);
  return names;
}

export const tokenList: Command<{ ownerId: string }, { tokens: TokenSummary[] }> = {
  name: 'token list',
  flags: { owner: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ ownerId: ownerId(flags) }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { tokens: await context.stores.tokens.tokensOf(input.ownerId) };
  },
};

/**
 * The token stops at once: its items go from the table (the authorizer finds it no more), and in AWS its API key
 * is deleted and the stage's authorizer cache flushed. An unknown id writes nothing. The gateway's part is recorded
 * when it succeeds, so revoking a token whose key deletion or cache flush failed tries that part again; a token
 * revoked and cleaned up answers "already revoked".
 */
export const tokenRevoke: Command<{ tokenId: string }, { tokenId: string; revoked: true }> = {
  name: 'token revoke',
  flags: { 'token-id': { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ tokenId: tokenId(flags) }),
  async run(context, input) {
    await context.tokenKeys.check();
    const { tokens } = context.stores;
    const token = await tokens.tokenById(input.tokenId);
    if (!token) throw new CommandError(`Token ${input.tokenId} not found: "token list --owner ID" shows an owner's tokens`);
    const alreadyRevoked = `Token ${input.tokenId} is already revoked`;
    if (token.revokedAt !== undefined && token.cleanedUp) throw new CommandError(`${alreadyRevoked} (at ${new Date(token.revokedAt * 1000).toISOString()})`);
    if (token.revokedAt === undefined && !(await tokens.revokeToken(token, context.now()))) throw new CommandError(alreadyRevoked);
    await context.tokenKeys.revoke(input.tokenId);
    await tokens.markRevokeCleanedUp(input.tokenId, context.now());
    return { tokenId: input.tokenId, revoked: true };
  },
};

/**
 * After upgrading (`npm run deploy` runs it): tokens created before token ids and scopes get theirs, so they can be
 * listed and revoked, and write as they always could.
 */
export const tokenMigrate: Command<Record<string, never>, { migrated: number; tokens: MigratedToken[] }> = {
  name: 'token migrate',
  flags: {},
  validate: () => ({}),
  async run(context) {
    const tokens = await context.stores.tokens.migrateLegacyTokens();
    return { migrated: tokens.length, tokens };
  },
};

/** Who changed what in a project through the API, newest first. */
export const auditList: Command<{ projectId: string; limit: number }, { entries: AuditEntry[] }> = {
  name: 'audit list',
  flags: { project: { required: true, placeholder: 'ID' }, limit: { placeholder: 'N' } },
  validate: (flags) => ({ projectId: projectId(flags), limit: auditLimit(flags) }),
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { entries: await context.stores.audit.list({ projectId: input.projectId }, input.limit) };
  },
};

/** The owner's token entries (created, revoked), newest first. */
export const tokenAudit: Command<{ ownerId: string; limit: number }, { entries: AuditEntry[] }> = {
  name: 'token audit',
  flags: { owner: { required: true, placeholder: 'ID' }, limit: { placeholder: 'N' } },
  validate: (flags) => ({ ownerId: ownerId(flags), limit: auditLimit(flags) }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { entries: await context.stores.audit.list({ ownerId: input.ownerId }, input.limit) };
  },
};

export const projectCreate: Command<{ ownerId: string; name: string; plan: Plan }, { projectId: string }> = {
  name: 'project create',
  flags: {
    owner: { required: true, placeholder: 'ID' },
    name: { required: true, placeholder: 'NAME' },
    plan: { placeholder: PLANS.join('|') },
  },
  validate: (flags) => ({
    ownerId: ownerId(flags),
    name: printableText('name', flags.required('name').trim(), MAX_PROJECT_NAME_LENGTH, { allowEmpty: false }),
    plan: oneOf('plan', flags.optional('plan') ?? 'business', PLANS),
  }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { projectId: await context.stores.dashboard.createProject({ ...input, now: context.now() }) };
  },
};

/** What `keys issue` hands the repository; the time is added when it runs. */
export type KeysIssueInput = Omit<NewKeys, 'now'>;

export const keysIssue: Command<KeysIssueInput, { keys: DashboardIssuedKey[] }> = {
  name: 'keys issue',
  flags: {
    project: { required: true, placeholder: 'ID' },
    count: { placeholder: 'N' },
    watermark: { placeholder: 'HEX16' },
    tier: { placeholder: KEY_TIERS.join('|') },
    'max-uses': { placeholder: 'N' },
    'expires-at': { placeholder: 'UNIX' },
    'max-fingerprints': { placeholder: 'N' },
    note: { placeholder: 'TEXT' },
    'discord-id': { placeholder: 'ID' },
  },
  validate(flags) {
    const count = flags.optional('count');
    const mark = flags.optional('watermark');
    const maxUses = flags.optional('max-uses');
    const expiresAt = flags.optional('expires-at');
    const maxFingerprints = flags.optional('max-fingerprints');
    const note = flags.optional('note');
    const discordId = flags.optional('discord-id');
    return {
      projectId: projectId(flags),
      count: count === undefined ? 1 : wholeNumber('count', count, { min: 1, max: MAX_KEYS_PER_DASHBOARD_ISSUE }),
      ...(mark === undefined ? {} : { watermark: watermark(mark) }),
      tier: oneOf('tier', flags.optional('tier') ?? 'standard', KEY_TIERS),
      maxUses: maxUses === undefined ? null : wholeNumber('max-uses', maxUses, { min: 1, max: Number.MAX_SAFE_INTEGER }),
      // A past expiry is allowed: expired keys are what some abuse detectors look for.
      ...(expiresAt === undefined ? {} : { expiresAt: wholeNumber('expires-at', expiresAt, { min: 1, max: MAX_UNIX_SECONDS }) }),
      // The owner API's rules for the same fields (DESIGN.md, "Selling keys").
      maxFingerprints: maxFingerprints === undefined ? null : wholeNumber('max-fingerprints', maxFingerprints, { min: 1, max: MAX_FINGERPRINTS }),
      ...(note === undefined ? {} : { note: printableText('note', note, MAX_NOTE_LENGTH, { allowEmpty: true }) }),
      ...(discordId === undefined ? {} : { discordId: discordUserId(discordId) }),
    };
  },
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { keys: await context.stores.dashboard.issueKeys({ ...input, now: context.now() }) };
  },
};

/**
 * Upload a script: the file is read and checked whole before anything is written (1 byte to 5 MiB, UTF-8), then
 * stored and its version written and made current (#domain/scripts publishScript says in what order, and how a
 * failed version write is cleaned up).
 */
export const versionsUpload: Command<
  { projectId: string; file: string; notes: string },
  { id: string; version_number: number; size_bytes: number; sha256: string }
> = {
  name: 'versions upload',
  flags: {
    project: { required: true, placeholder: 'ID' },
    file: { required: true, placeholder: 'PATH' },
    notes: { placeholder: 'TEXT' },
  },
  validate: (flags) => ({
    projectId: projectId(flags),
    file: flags.required('file'),
    notes: printableText('notes', flags.optional('notes') ?? '', MAX_VERSION_NOTES_LENGTH, { allowEmpty: true }),
  }),
  async run(context, input) {
    const bytes = await scriptFile(input.file);
    if (!context.scripts)
      throw new CommandError(
        'No scripts bucket known: run npm start, or set SCRIPT_BUCKET (and S3_ENDPOINT for a local S3), or deploy the stack (output ScriptBucketName)',
      );
    await requireProject(context, input.projectId);
    return publishScript(
      { scripts: context.scripts, versions: context.stores.dashboard },
      { id: newId('ver'), projectId: input.projectId, bytes, notes: input.notes, now: context.now() },
    );
  },
};

/** The file's bytes, checked to be a script; anything else is one line naming the problem. */
async function scriptFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--file ${path} cannot be read: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : oneLine(error)}`);
  }
  const problem = scriptFileProblem(bytes);
  if (problem) throw new UsageError(`--file ${path} ${problem}`);
  return bytes;
}

export const webhooksAdd: Command<{ projectId: string; url: string; events: EventName[]; enabled: boolean }, { id: string }> = {
  name: 'webhooks add',
  flags: {
    project: { required: true, placeholder: 'ID' },
    url: { required: true, placeholder: DISCORD_WEBHOOK_URL_FORM },
    events: { required: true, placeholder: 'e1,e2' },
    disabled: { kind: 'switch' },
  },
  validate: (flags) => ({
    projectId: projectId(flags),
    url: webhookUrl(flags.required('url')),
    events: eventList(flags.required('events')),
    enabled: !flags.switch('disabled'),
  }),
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { id: await context.stores.dashboard.addWebhook({ ...input, now: context.now() }) };
  },
};

// ---- the command table ----

/** A command with its input type hidden, so commands of any shape share one table. */
export interface CommandEntry {
  usage: string;
  /** Checks the arguments at once (throws UsageError) and returns the run, which needs a table. */
  prepare(argv: readonly string[]): (context: DashboardContext) => Promise<object>;
}

export function entry<Input, Result extends object>(command: Command<Input, Result>): CommandEntry {
  return {
    usage: usageLine(command.name, command.flags),
    prepare: (argv) => {
      const input = parseCommand(command, argv);
      return (context) => command.run(context, input);
    },
  };
}

/** Every command of the CLI by name; a new command is one more line here. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  [ownerCreate.name]: entry(ownerCreate),
  [tokenCreate.name]: entry(tokenCreate),
  [projectCreate.name]: entry(projectCreate),
  // The dashboard's writes are audited with the identity that ran them (dashboard/audited.ts).
  [keysIssue.name]: entry(audited(keysIssue, DASHBOARD_AUDITS.keysIssue)),
  [versionsUpload.name]: entry(audited(versionsUpload, DASHBOARD_AUDITS.versionsUpload)),
  [webhooksAdd.name]: entry(audited(webhooksAdd, DASHBOARD_AUDITS.webhooksAdd)),
  [tokenList.name]: entry(tokenList),
  [tokenRevoke.name]: entry(tokenRevoke),
  [tokenAudit.name]: entry(tokenAudit),
  [tokenMigrate.name]: entry(audited(tokenMigrate, DASHBOARD_AUDITS.tokenMigrate)),
  [auditList.name]: entry(auditList),
  [telemetryExecution.name]: entry(telemetryExecution),
  [telemetryValidation.name]: entry(telemetryValidation),
  [detectDaily.name]: entry(detectDaily),
  [discordLink.name]: entry(audited(discordLink, DASHBOARD_AUDITS.discordLink)),
  [discordUnlink.name]: entry(audited(discordUnlink, DASHBOARD_AUDITS.discordUnlink)),
  [discordSimulate.name]: entry(discordSimulate),
};

/** The command named by the leading words of argv (the longest name that matches) and the rest. */
export function findCommand(
  argv: readonly string[],
  commands: Readonly<Record<string, CommandEntry>> = COMMANDS,
): { entry: CommandEntry; rest: readonly string[] } {
  const firstFlag = argv.findIndex((arg) => arg.startsWith('-'));
  const words = firstFlag === -1 ? argv : argv.slice(0, firstFlag);
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join(' ');
    const found = Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (found) return { entry: found, rest: argv.slice(n) };
  }
  const given = words.join(' ');
  throw new UsageError(`${given ? `Unknown command "${given}"` : 'No command given'}; commands: ${Object.keys(commands).join(', ')}`);
}
