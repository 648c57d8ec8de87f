import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm start` tells other tools (the dashboard CLI, test harnesses) how to reach the running stack. */
export const DEFAULT_STATE_FILE = fileURLToPath(new URL('../.local/stack.json', import.meta.url));

/** The contents of `.local/stack.json`, exactly these fields. */
export interface StackInfo {
  baseUrl: string;
  token: string;
  ownerId: string;
  projectId: string;
  dynamodbEndpoint: string;
  tableName: string;
  inboxUrl: string;
  /** The raw value of one active demo key, for the loader key check (POST /v1/loader/validate). */
  demoKey: string;
  /** That key's id, for revoking it (POST /v1/projects/:id/keys/revoke). */
  demoKeyId: string;
  /** The local S3 (s3rver) and the bucket that hold each version's script, for the dashboard's uploads. */
  s3Endpoint: string;
  bucketName: string;
  /** The publisher console: sign in there with `token`. */
  consoleUrl: string;
  /** The public key of the local stack's Discord key pair, which the demo project is linked to (`discord link --public-key`). */
  discordPublicKey: string;
}

/** StackInfo's fields in the file's order: the file holds these and nothing else the caller's object may carry. */
const STACK_INFO_FIELDS = [
  'baseUrl',
  'consoleUrl',
  'token',
  'ownerId',
  'projectId',
  'dynamodbEndpoint',
  'tableName',
  'inboxUrl',
  'demoKey',
  'demoKeyId',
  's3Endpoint',
  'bucketName',
  'discordPublicKey',
] as const satisfies readonly (keyof StackInfo)[];

function stackInfoJson(info: StackInfo): string {
  const fields = Object.fromEntries(STACK_INFO_FIELDS.map((field) => [field, info[field]]));
  return `${JSON.stringify(fields, null, 2)}\n`;
}

/**
 * Written whole under a temporary name and renamed, so a tool polling for the file never reads half of it.
 * Readable by the user only: it holds a bearer token.
 */
export async function writeStateFile(path: string, info: StackInfo): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, stackInfoJson(info), { mode: 0o600 });
  await rename(temporary, path);
}

/** Removes the file if it still describes this stack; another stack may have written it since. */
export async function removeStateFileIfOurs(path: string, info: StackInfo): Promise<void> {
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === stackInfoJson(info)) await rm(path, { force: true });
}
