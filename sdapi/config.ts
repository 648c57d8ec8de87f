import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBearer } from '#domain/tokens';
import { isLoopbackHostname } from '#http/loopback';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { UsageError } from './errors';

/** Where the API is and who calls it. The token is a secret: nothing prints it, not even --verbose. */
export interface ApiConfig {
  baseUrl: string;
  token: string;
  projectId: string;
  /** Where each setting came from, for --verbose; names only, never the token's value. */
  sources: string[];
}

export interface ConfigFlags {
  baseUrl?: string;
  token?: string;
  project?: string;
}

/** What `npm start` writes: the local stack's address, its demo token and project. */
export const LOCAL_STACK_FILE = join('.local', 'stack.json');

interface LocalStackFile {
  baseUrl?: unknown;
  token?: unknown;
  projectId?: unknown;
}

/**
 * Each setting from its flag, else its SDAPI_* variable. Only when no flag and no SDAPI_* variable is set at all do
 * the settings come from the local stack's `.local/stack.json` in the current folder (so `npm start` then
 * `npx sdapi ...` needs no setup), and then only with a loopback base URL: a folder is not trusted to pick where a
 * token the caller set goes, nor to send the demo token off this machine.
 */
export function resolveConfig(flags: ConfigFlags, env: Record<string, string | undefined>, cwd: string): ApiConfig {
  const sources: string[] = [];
  const configured = [flags.baseUrl, flags.token, flags.project].some((flag) => flag !== undefined) || SDAPI_VARIABLES.some((variable) => env[variable]);
  const stack = configured ? {} : readLocalStack(cwd);
  const pick = (flag: string | undefined, variable: string, stackField: keyof LocalStackFile, what: string, hint: string): string => {
    if (flag !== undefined) {
      sources.push(`${what} from ${hint.split(' ')[0]}`);
      return flag;
    }
    const fromEnv = env[variable];
    if (fromEnv) {
      sources.push(`${what} from ${variable}`);
      return fromEnv;
    }
    const value = stack[stackField];
    if (typeof value === 'string' && value) {
      sources.push(`${what} from ${LOCAL_STACK_FILE}`);
      return value;
    }
    throw new UsageError(`No ${what}: set ${variable} or pass ${hint}, or run npm start (the local stack writes ${LOCAL_STACK_FILE})`);
  };

  const named = pick(flags.baseUrl, 'SDAPI_BASE_URL', 'baseUrl', 'API base URL', '--base-url URL');
  if (!configured && !isLoopbackUrl(named)) {
    throw new UsageError(
      `${LOCAL_STACK_FILE} names ${named}, which is not this machine: it may only name the local stack (127.0.0.1 or localhost); set SDAPI_BASE_URL, SDAPI_TOKEN and SDAPI_PROJECT to call another API`,
    );
  }
  const baseUrl = normalizeBaseUrl(named);
  const token = pick(flags.token, 'SDAPI_TOKEN', 'token', 'API token', '--token TOKEN');
  const projectId = pick(flags.project, 'SDAPI_PROJECT', 'projectId', 'project id', '--project ID');
  // Checked here so a malformed token never reaches an HTTP library whose error message might quote it.
  if (parseBearer(`Bearer ${token}`) !== token) throw new UsageError('The API token is malformed: it has characters or a length no API token has');
  if (!PATH_ID_PATTERN.test(projectId)) throw new UsageError(`Project id "${projectId}" is malformed: expected something like prj_5e0c8a3f71b24d9c6a1f`);
  return { baseUrl, token, projectId, sources };
}

const SDAPI_VARIABLES = ['SDAPI_BASE_URL', 'SDAPI_TOKEN', 'SDAPI_PROJECT'] as const;

function isLoopbackUrl(value: string): boolean {
  return URL.canParse(value) && isLoopbackHostname(new URL(value).hostname);
}

function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`API base URL "${value}" is not a URL: expected something like http://127.0.0.1:3000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`API base URL must be http or https, not ${url.protocol}`);
  if (url.username || url.password) throw new UsageError('API base URL must not carry credentials: pass the token with SDAPI_TOKEN');
  // Plain http would show the bearer token to every network hop; only this machine's loopback is spared.
  if (url.protocol === 'http:' && !isLoopbackHostname(url.hostname))
    throw new UsageError(`API base URL must use https for ${url.hostname}: plain http is only for the local stack (127.0.0.1 or localhost)`);
  return url.href.replace(/\/+$/, '');
}

function readLocalStack(cwd: string): LocalStackFile {
  let text: string;
  try {
    text = readFileSync(join(cwd, LOCAL_STACK_FILE), 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as LocalStackFile) : {};
  } catch {
    throw new UsageError(`${LOCAL_STACK_FILE} is not valid JSON; restart the local stack (npm start) or set SDAPI_BASE_URL, SDAPI_TOKEN and SDAPI_PROJECT`);
  }
}
