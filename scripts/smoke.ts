import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISCORD_ROUTE, SCRIPT_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { BROWSER_PATH, launchBrowser } from '#local/browser';
import { type DiscordKeyPair, fileDiscordKeyPair } from '#local/discord-key';
import { isMainModule } from '#local/main-module';
import { DEFAULT_STATE_FILE, type StackInfo } from '#local/state-file';

/**
 * `npm run smoke -- [--url SERVICE_URL --token TOKEN] [--project ID] [--discord-key PEM] [--state-file PATH]`: what a publisher runs right
 * after `npm run deploy` (and a test runs against `npm start`): one checklist line per step, through the front door
 * as buyers and the console reach it, exit 0 only when every step passed. With no `--url` it reads the local stack's
 * `.local/stack.json` (or --state-file). Each step and what to do when it fails: docs/operations.md.
 */

export const STEP_NAMES = ['console', 'sign-in', 'upload', 'issue-key', 'fetch', 'validate', 'revoke', 'webhook-test', 'discord-ping', 'stats'] as const;
export type StepName = (typeof STEP_NAMES)[number];

export interface Step {
  name: StepName;
  /** Steps whose results this one uses: it is not run when one of them failed. */
  needs?: readonly StepName[];
  /** What passed, one line; throws with what failed. */
  run(): Promise<string>;
}

export type StepOutcome = { name: StepName; state: 'passed' | 'failed' | 'not run'; detail: string };

const MARK = { passed: 'ok  ', failed: 'FAIL', 'not run': 'skip' } as const;
const NAME_WIDTH = Math.max(...STEP_NAMES.map((name) => name.length));

export const checklistLine = (outcome: StepOutcome) => `${MARK[outcome.state]}  ${outcome.name.padEnd(NAME_WIDTH)}  ${outcome.detail}`;

/** Runs the steps in order, printing each line as it ends; true only when every step passed. */
export async function runChecklist(steps: readonly Step[], print: (line: string) => void): Promise<{ passed: boolean; outcomes: StepOutcome[] }> {
  const outcomes: StepOutcome[] = [];
  for (const step of steps) {
    const failedNeed = step.needs?.find((need) => outcomes.find((outcome) => outcome.name === need)?.state !== 'passed');
    let outcome: StepOutcome;
    if (failedNeed) outcome = { name: step.name, state: 'not run', detail: `needs ${failedNeed}, which did not pass` };
    else {
      try {
        outcome = { name: step.name, state: 'passed', detail: await step.run() };
      } catch (error) {
        outcome = { name: step.name, state: 'failed', detail: error instanceof Error ? error.message : String(error) };
      }
    }
    outcomes.push(outcome);
    print(checklistLine(outcome));
  }
  const failed = outcomes.filter((outcome) => outcome.state !== 'passed').length;
  print(failed === 0 ? `All ${outcomes.length} steps passed.` : `${failed} of ${outcomes.length} steps did not pass.`);
  return { passed: failed === 0, outcomes };
}

export interface SmokeArgs {
  url: string;
  token: string;
  projectId?: string;
  /** The Discord application's private key (PEM) the project is linked to: the PING is signed with it. */
  discordKeyFile?: string;
  /** Which browser uploads; none: Node does. */
  browser?: string;
}

const USAGE = 'usage: npm run smoke -- [--url SERVICE_URL --token TOKEN] [--project ID] [--discord-key PEM_FILE] [--state-file PATH]';
const LOCAL_DISCORD_KEY = fileURLToPath(new URL('../.local/discord-key.pem', import.meta.url));

/** The flags, or the local stack's state file when there is no `--url`. Throws one sentence naming the fix. */
export function parseSmokeArgs(argv: readonly string[], readState: (path: string) => StackInfo | undefined): SmokeArgs {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i] ?? '';
    const value = argv[i + 1];
    if (!['--url', '--token', '--project', '--discord-key', '--state-file'].includes(name)) throw new Error(`Unexpected argument "${name}"; ${USAGE}`);
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value; ${USAGE}`);
    flags.set(name, value);
  }
  const discordKeyFile = flags.get('--discord-key');
  const url = flags.get('--url');
  if (url !== undefined) {
    const token = flags.get('--token') ?? process.env.SDAPI_TOKEN;
    if (!token) throw new Error(`--url needs --token (an API token of the owner, write scope); ${USAGE}`);
    return { url: url.replace(/\/+$/, ''), token, projectId: flags.get('--project'), ...(discordKeyFile ? { discordKeyFile: resolve(discordKeyFile) } : {}) };
  }
  const stateFile = resolve(flags.get('--state-file') ?? DEFAULT_STATE_FILE);
  const state = readState(stateFile);
  if (!state) throw new Error(`No --url, and no local stack (${stateFile} is missing): start one with npm start, or pass --url and --token`);
  return {
    url: state.baseUrl,
    token: flags.get('--token') ?? state.token,
    projectId: flags.get('--project') ?? state.projectId,
    discordKeyFile: discordKeyFile ? resolve(discordKeyFile) : LOCAL_DISCORD_KEY,
  };
}

/** What the steps share as they go: the session, the key, the version to roll back to. */
interface SmokeState {
  cookie?: string;
  projectId?: string;
  previousVersionId?: string | null;
  uploadedVersion?: { id: string; version_number: number };
  key?: { id: string; key: string; watermark: string };
  keyRevoked?: boolean;
}

const SMOKE_MARKER = 'smoke test of the deployment';

/** The steps against one service URL, in the checklist's order, and the cleanup to run after them. */
export function smokeSteps(args: SmokeArgs, state: SmokeState = {}): { steps: Step[]; cleanUp: () => Promise<string[]> } {
  const origin = new URL(args.url).origin;
  const bearer = { Authorization: `Bearer ${args.token}` };
  const consoleHeaders = (): Record<string, string> => ({ Origin: origin, ...(state.cookie ? { Cookie: state.cookie } : {}) });
  const project = () => {
    if (!state.projectId) throw new Error('no project');
    return state.projectId;
  };
  const owner = (path: string) => `${args.url}/v1/projects/${encodeURIComponent(project())}${path}`;
  const consoleApi = (path: string) => `${args.url}/console/api${path}`;
  const check = () => ({
    project_id: project(),
    key: state.key?.key,
    fingerprint: createHash('sha256').update('smoke-test-machine').digest('hex'),
    executor: 'smoke',
  });

  const steps: Step[] = [
    {
      name: 'console',
      async run() {
        const response = await fetch(`${args.url}/`, { headers: { Accept: 'text/html' } });
        const body = await response.text();
        if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/html'))
          throw new Error(`GET / ended at ${response.url} with ${response.status} ${response.headers.get('content-type') ?? ''}, not the console page`);
        if (!body.includes('<script')) throw new Error(`${response.url} is HTML but not the console page (no script)`);
        if (!response.headers.get('content-security-policy'))
          throw new Error(`${response.url} has no Content-Security-Policy: the front door's headers policy is missing`);
        return `the bare URL leads to ${new URL(response.url).pathname} (200, with the CSP)`;
      },
    },
    {
      name: 'sign-in',
      async run() {
        const response = await fetch(consoleApi('/session'), {
          method: 'POST',
          headers: { ...consoleHeaders(), 'Content-Type': 'application/json' },
          body: JSON.stringify({ token: args.token }),
        });
        if (response.status !== 200) throw new Error(`POST /console/api/session answered ${response.status}: ${await errorOf(response)}`);
        state.cookie = response.headers
          .getSetCookie()
          .map((cookie) => cookie.split(';')[0])
          .join('; ');
        const projects = await fetch(consoleApi('/projects'), { headers: consoleHeaders() });
        const list = ((await projects.json()) as { projects?: { id: string; name: string }[] }).projects ?? [];
        state.projectId = args.projectId ?? list[0]?.id;
        if (!state.projectId) throw new Error('signed in, but the token owns no project: create one (dashboard project create) or pass --project');
        if (!list.some((candidate) => candidate.id === state.projectId)) throw new Error(`signed in, but the token does not own project ${state.projectId}`);
        return `console session for project ${state.projectId}`;
      },
    },
    {
      name: 'upload',
      needs: ['sign-in'],
      async run() {
        const versions = await fetch(owner('/versions'), { headers: bearer });
        if (versions.status !== 200) throw new Error(`GET versions answered ${versions.status}: ${await errorOf(versions)}`);
        state.previousVersionId = ((await versions.json()) as { current_version_id: string | null }).current_version_id;
        const bytes = Buffer.from(`-- ${SMOKE_MARKER} WM_XXXXXXXXXXXXXXXX\nprint("smoke")\n`);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const started = await fetch(consoleApi(`/projects/${encodeURIComponent(project())}/versions/uploads`), {
          method: 'POST',
          headers: { ...consoleHeaders(), 'Content-Type': 'application/json' },
          body: JSON.stringify({ size_bytes: bytes.length, sha256, notes: 'npm run smoke' }),
        });
        if (started.status !== 200) throw new Error(`starting the upload answered ${started.status}: ${await errorOf(started)}`);
        const upload = (await started.json()) as { upload_id: string; url: string; headers: Record<string, string> };
        const from = await putUpload(args, upload, bytes);
        const committed = await fetch(
          consoleApi(`/projects/${encodeURIComponent(project())}/versions/uploads/${encodeURIComponent(upload.upload_id)}/commit`),
          {
            method: 'POST',
            headers: consoleHeaders(),
          },
        );
        if (committed.status !== 200) throw new Error(`the commit answered ${committed.status}: ${await errorOf(committed)}`);
        state.uploadedVersion = (await committed.json()) as { id: string; version_number: number };
        return `version ${state.uploadedVersion.version_number} through the presigned URL (${new URL(upload.url).host}), PUT ${from}`;
      },
    },
    {
      name: 'issue-key',
      needs: ['sign-in'],
      async run() {
        const response = await fetch(owner('/keys'), {
          method: 'POST',
          headers: { ...bearer, 'Content-Type': 'application/json' },
          body: JSON.stringify({ order_id: `smoke-${Date.now()}`, max_fingerprints: 1, note: 'npm run smoke' }),
        });
        if (response.status !== 201 && response.status !== 200) throw new Error(`POST keys answered ${response.status}: ${await errorOf(response)}`);
        const issued = ((await response.json()) as { keys: { id: string; key: string; watermark: string }[] }).keys[0];
        if (!issued) throw new Error('POST keys answered no key');
        state.key = issued;
        return `key ${issued.id} (watermark ${issued.watermark})`;
      },
    },
    {
      name: 'fetch',
      needs: ['issue-key'],
      async run() {
        const response = await fetch(`${args.url}${SCRIPT_ROUTE.path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(check()),
        });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`POST ${SCRIPT_ROUTE.path} answered ${response.status}: ${body.slice(0, 200)}`);
        const mark = `WM_${state.key?.watermark}`;
        if (!body.includes(mark)) throw new Error(`the script came without the key's watermark ${mark}`);
        if (state.uploadedVersion && !body.includes(SMOKE_MARKER)) throw new Error('the script is not the version just uploaded');
        return `${Buffer.byteLength(body)} bytes, stamped ${mark}`;
      },
    },
    {
      name: 'validate',
      needs: ['issue-key'],
      async run() {
        const answer = await loaderCheck(`${args.url}${VALIDATE_ROUTE.path}`, check());
        if (answer.code !== 'KEY_VALID') throw new Error(`validate answered ${answer.status} ${answer.code ?? answer.text}`);
        return 'KEY_VALID';
      },
    },
    {
      name: 'revoke',
      needs: ['issue-key'],
      async run() {
        const response = await fetch(owner('/keys/revoke'), {
          method: 'POST',
          headers: { ...bearer, 'Content-Type': 'application/json' },
          body: JSON.stringify({ key_id: state.key?.id }),
        });
        if (response.status !== 200) throw new Error(`POST keys/revoke answered ${response.status}: ${await errorOf(response)}`);
        state.keyRevoked = true;
        const answer = await loaderCheck(`${args.url}${VALIDATE_ROUTE.path}`, check());
        if (answer.code !== 'KEY_REVOKED') throw new Error(`revoked, but validate then answered ${answer.status} ${answer.code ?? answer.text}`);
        return 'revoked, then validate answers KEY_REVOKED';
      },
    },
    {
      name: 'webhook-test',
      needs: ['sign-in'],
      async run() {
        const listed = await fetch(owner('/webhooks'), { headers: bearer });
        if (listed.status !== 200) throw new Error(`GET webhooks answered ${listed.status}: ${await errorOf(listed)}`);
        const webhook = ((await listed.json()) as { webhooks: { id: string; enabled: number }[] }).webhooks.find((candidate) => candidate.enabled === 1);
        if (!webhook) throw new Error('the project has no enabled webhook to test: add one (console, Webhooks) and run again');
        const sent = await fetch(consoleApi(`/projects/${encodeURIComponent(project())}/webhooks/${encodeURIComponent(webhook.id)}/test`), {
          method: 'POST',
          headers: consoleHeaders(),
        });
        if (sent.status !== 200) throw new Error(`Send test answered ${sent.status}: ${await errorOf(sent)}`);
        return `Discord took the test embed of webhook ${webhook.id}`;
      },
    },
    {
      name: 'discord-ping',
      needs: ['sign-in'],
      async run() {
        const keys = args.discordKeyFile && existsSync(args.discordKeyFile) ? await fileDiscordKeyPair(args.discordKeyFile) : undefined;
        return discordPing(`${args.url}${DISCORD_ROUTE.path.replace('{project_id}', encodeURIComponent(project()))}`, keys);
      },
    },
    {
      name: 'stats',
      needs: ['sign-in'],
      async run() {
        const response = await fetch(owner('/stats'), { headers: bearer });
        if (response.status !== 200) throw new Error(`GET stats answered ${response.status}: ${await errorOf(response)}`);
        return 'GET stats answered 200';
      },
    },
  ];

  async function cleanUp(): Promise<string[]> {
    const notes: string[] = [];
    if (state.key && !state.keyRevoked) {
      const response = await fetch(owner('/keys/revoke'), {
        method: 'POST',
        headers: { ...bearer, 'Content-Type': 'application/json' },
        body: JSON.stringify({ key_id: state.key.id }),
      });
      notes.push(
        response.status === 200 ? `revoked the smoke key ${state.key.id}` : `could not revoke the smoke key ${state.key.id} (${response.status}): revoke it`,
      );
    }
    if (state.uploadedVersion) {
      if (state.previousVersionId) {
        const response = await fetch(owner('/versions/rollback'), {
          method: 'POST',
          headers: { ...bearer, 'Content-Type': 'application/json' },
          body: JSON.stringify({ version_id: state.previousVersionId }),
        });
        notes.push(
          response.status === 200
            ? `rolled back to the version current before (${state.previousVersionId}); the smoke version ${state.uploadedVersion.version_number} stays in the list`
            : `could not roll back to ${state.previousVersionId} (${response.status}): the smoke version is current, roll back in the console`,
        );
      } else notes.push(`the smoke version ${state.uploadedVersion.version_number} is the project's only version: upload the real script`);
    }
    if (state.cookie) await fetch(consoleApi('/session'), { method: 'DELETE', headers: consoleHeaders() }).catch(() => undefined);
    return notes;
  }

  return { steps, cleanUp };
}

/** The PUT of the file to the presigned URL: from a page of the console in Chromium when one is installed (under the console's CSP, across origins by CORS, as a publisher's browser), else from Node. */
async function putUpload(args: SmokeArgs, upload: { url: string; headers: Record<string, string> }, bytes: Buffer): Promise<string> {
  const browserPath = args.browser ?? BROWSER_PATH;
  if (!browserPath) {
    const response = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
    if (!response.ok) throw new Error(`storage refused the PUT from Node (${response.status}): ${(await response.text()).slice(0, 200)}`);
    return 'from Node (no Chromium found: the console page, CSP and CORS were not tried)';
  }
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${args.url}/console/`);
    const result = (await page.evaluate(
      async ({ url, headers, body }) => {
        try {
          const response = await fetch(url, { method: 'PUT', headers, body: new TextEncoder().encode(body) });
          return { status: response.status };
        } catch (error) {
          return { error: String(error) };
        }
      },
      { url: upload.url, headers: upload.headers, body: bytes.toString('utf8') },
    )) as { status?: number; error?: string };
    if (result.error !== undefined)
      throw new Error(
        `the browser refused the PUT from the console page (${result.error}): the console's CSP connect-src or the bucket's CORS rule does not allow it`,
      );
    if (result.status !== 200) throw new Error(`storage refused the PUT from the console page (${result.status})`);
    return `from Chromium on the console page (${browserPath})`;
  } finally {
    await browser.close();
  }
}

async function loaderCheck(url: string, body: unknown): Promise<{ status: number; code?: string; text: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  try {
    return { status: response.status, code: (JSON.parse(text) as { code?: string }).code, text };
  } catch {
    return { status: response.status, text: text.slice(0, 200) };
  }
}

/**
 * Discord's PING (interaction type 1): signed with the application's private key when the caller has it (the local
 * stack's, or --discord-key), answered `{"type":1}`; else sent unsigned, which the endpoint must refuse with 401
 * (Discord's own check of an interactions URL sends such a request): it is up, and it verifies.
 */
async function discordPing(url: string, keys: DiscordKeyPair | undefined): Promise<string> {
  const body = JSON.stringify({ type: 1, id: 'smoke', application_id: 'smoke', token: 'smoke', version: 1 });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Signature-Timestamp': timestamp };
  if (keys) headers['X-Signature-Ed25519'] = keys.signRequest(timestamp, body);
  else headers['X-Signature-Ed25519'] = '0'.repeat(128);
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (keys) {
    if (response.status !== 200 || !/"type"\s*:\s*1\b/.test(text))
      throw new Error(`a signed PING answered ${response.status}: ${text.slice(0, 200)} (is the project linked to this key?)`);
    return 'a signed PING answered PONG';
  }
  if (response.status !== 401) throw new Error(`an unsigned PING answered ${response.status}, not 401: ${text.slice(0, 200)}`);
  return 'no Discord private key (--discord-key): an unsigned PING was refused with 401, so the endpoint is up and verifies';
}

async function errorOf(response: Response): Promise<string> {
  const text = await response.text();
  try {
    return (JSON.parse(text) as { error?: string }).error ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

function readLocalState(path: string): StackInfo | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StackInfo;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  let args: SmokeArgs;
  try {
    args = parseSmokeArgs(process.argv.slice(2), readLocalState);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  console.log(`Smoke test of ${args.url}`);
  const { steps, cleanUp } = smokeSteps(args);
  const { passed } = await runChecklist(steps, (line) => console.log(line));
  for (const note of await cleanUp()) console.log(`cleanup: ${note}`);
  process.exitCode = passed ? 0 : 1;
}

if (isMainModule(import.meta.url)) await main();
