import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createS3Client, localS3Config, S3ScriptStore } from '#adapters/script-store';
import { createStores, type Stores } from '#adapters/stores';
import { type GatewayOutputs, usagePlanTokenKeys as gatewayTokenKeys, oneLine, type TokenKeys } from '#adapters/usage-plan-token-keys';
import { unixSeconds } from '#domain/model';
import type { KeySecret, ScriptStore } from '#domain/ports';
import { DEFAULT_STACK_NAME } from '#lib/context';
import { fileKeySecret } from '#local/key-secret';
import type { StackInfo } from '#local/state-file';

/** A failure that is not a typo on the command line (unknown owner, unreachable table): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

const LOCAL_TOKEN_KEYS: TokenKeys = { check: async () => undefined, register: async () => undefined, revoke: async () => undefined };

export interface DashboardContext {
  /** The table's stores: the dashboard's writes, tokens, projects, and telemetry (dashboard/commands/telemetry.ts). */
  stores: Stores;
  /** Where version scripts are stored; undefined when the location named no bucket (only `versions upload` needs one). */
  scripts?: ScriptStore;
  now: () => number;
  tokenKeys: TokenKeys;
  /** Who runs the command, for its audit entries: the AWS identity's ARN, or locally `local:<OS user>`. */
  caller: () => Promise<string>;
  /** A line for the person running the command, beside its JSON answer (stderr). */
  warn: (line: string) => void;
  /** The loader routes' base URL (the local stack's, the stack's ServiceUrl, custom domain or LoaderUrl, or LOADER_BASE_URL); undefined when unknown. */
  loaderBaseUrl?: string;
  /** The stack's key secret, which provider secrets are sealed under (`free set`); locally the local stack's file. */
  keySecret?: KeySecret;
}

/** The OS user running a command on the local stack, which has no identity of its own. */
export function localCaller(): string {
  try {
    return `local:${userInfo().username}`;
  } catch {
    return 'local';
  }
}

/** The AWS identity the dashboard's credentials belong to, asked once. */
export function awsCaller(sts: Pick<STSClient, 'send'>): () => Promise<string> {
  let arn: Promise<string> | undefined;
  return () =>
    (arn ??= sts.send(new GetCallerIdentityCommand({})).then(({ Arn }) => {
      if (!Arn) throw new CommandError('STS GetCallerIdentity named no ARN: the command is not run, as its audit entry could not say who ran it');
      return Arn;
    }));
}

export type TableLocation =
  | { kind: 'local'; endpoint: string; tableName: string; scripts?: ScriptBucket; loaderBaseUrl?: string }
  | { kind: 'aws'; tableName: string; stackName: string; gateway?: GatewayOutputs; scripts?: ScriptBucket; loaderBaseUrl?: string };

/** Where `versions upload` stores scripts: the stack's bucket, and the local S3's endpoint when it is the local stack's. */
interface ScriptBucket {
  bucketName: string;
  endpoint?: string;
}

type StackOutputs = Record<string, string>;
export type StackOutputsReader = (stackName: string) => Promise<StackOutputs>;

export interface LocateOptions {
  env: NodeJS.ProcessEnv;
  stateFile: string;
  readStackOutputs: StackOutputsReader;
}

/**
 * Where the table is, first match wins: `DYNAMODB_ENDPOINT` + `TABLE_NAME` (a local table named
 * explicitly), `TABLE_NAME` alone (a table in AWS), the running local stack's `.local/stack.json`, and
 * last the deployed stack's outputs in AWS. The scripts bucket comes with it: `SCRIPT_BUCKET` (and `S3_ENDPOINT`
 * for a local S3) beside the first two, the state file's `s3Endpoint` and `bucketName`, the stack's ScriptBucketName.
 */
export async function locateTable(options: LocateOptions): Promise<TableLocation> {
  const location = await locateTableOnly(options);
  const loaderBaseUrl = options.env.LOADER_BASE_URL || location.loaderBaseUrl;
  return loaderBaseUrl ? { ...location, loaderBaseUrl } : location;
}

async function locateTableOnly({ env, stateFile, readStackOutputs }: LocateOptions): Promise<TableLocation> {
  const stackName = env.STACK_NAME || DEFAULT_STACK_NAME;
  const envScripts = env.SCRIPT_BUCKET ? { scripts: { bucketName: env.SCRIPT_BUCKET, ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}) } } : {};
  if (env.DYNAMODB_ENDPOINT) {
    if (!env.TABLE_NAME) throw new CommandError('DYNAMODB_ENDPOINT is set but TABLE_NAME is not: set both, or neither to use .local/stack.json');
    return { kind: 'local', endpoint: env.DYNAMODB_ENDPOINT, tableName: env.TABLE_NAME, ...envScripts };
  }
  if (env.TABLE_NAME) return { kind: 'aws', tableName: env.TABLE_NAME, stackName, ...envScripts };

  const state = await readStateFile(stateFile);
  if (state) return { kind: 'local', ...state };
  return locateDeployedTable(stackName, readStackOutputs, `No local stack (${stateFile} not found) and the`);
}

/** The deployed stack's table (and API), from its outputs in AWS. */
export async function locateDeployedTable(
  stackName: string,
  readStackOutputs: StackOutputsReader,
  lead = 'The',
): Promise<Extract<TableLocation, { kind: 'aws' }>> {
  let outputs: StackOutputs;
  try {
    outputs = await readStackOutputs(stackName);
  } catch (error) {
    throw new CommandError(`${lead} AWS stack ${stackName} could not be read (${oneLine(error)}): run npm start, or set DYNAMODB_ENDPOINT and TABLE_NAME`);
  }
  const tableName = outputNamed(outputs, 'TableName');
  if (!tableName) throw new CommandError(`The AWS stack ${stackName} has no output whose key contains TableName`);
  const bucketName = outputNamed(outputs, 'ScriptBucketName');
  // The front door's one URL first: Discord and buyers reach the loader routes there.
  const loaderBaseUrl = outputNamed(outputs, 'ServiceUrl') ?? outputNamed(outputs, 'CustomDomainUrl') ?? outputNamed(outputs, 'LoaderUrl');
  return {
    kind: 'aws',
    tableName,
    stackName,
    gateway: gatewayOutputs(outputs),
    ...(bucketName ? { scripts: { bucketName } } : {}),
    ...(loaderBaseUrl ? { loaderBaseUrl } : {}),
  };
}

const GATEWAY_OUTPUTS = { usagePlanId: 'UsagePlanId', restApiId: 'RestApiId', stageName: 'StageName' } as const satisfies Record<keyof GatewayOutputs, string>;

/** The API's outputs, or undefined when the stack lacks one (a stack deployed before it was added). */
function gatewayOutputs(outputs: StackOutputs): GatewayOutputs | undefined {
  const found = Object.entries(GATEWAY_OUTPUTS).map(([field, part]) => [field, outputNamed(outputs, part)] as const);
  if (found.some(([, value]) => value === undefined)) return undefined;
  return Object.fromEntries(found) as unknown as GatewayOutputs;
}

async function readStateFile(path: string): Promise<{ endpoint: string; tableName: string; scripts?: ScriptBucket; loaderBaseUrl?: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    throw new CommandError(`${path} is not valid JSON: restart npm start to rewrite it`);
  }
  const { dynamodbEndpoint, tableName, s3Endpoint, bucketName, baseUrl } = (state ?? {}) as Partial<Record<keyof StackInfo, unknown>>;
  if (typeof dynamodbEndpoint !== 'string' || typeof tableName !== 'string') {
    throw new CommandError(`${path} lacks dynamodbEndpoint or tableName: restart npm start to rewrite it`);
  }
  const scripts = typeof s3Endpoint === 'string' && typeof bucketName === 'string' ? { scripts: { bucketName, endpoint: s3Endpoint } } : {};
  return { endpoint: dynamodbEndpoint, tableName, ...scripts, ...(typeof baseUrl === 'string' ? { loaderBaseUrl: baseUrl } : {}) };
}

/** The first output whose key contains `part`: CDK suffixes output keys with a hash of their path. */
function outputNamed(outputs: StackOutputs, part: string): string | undefined {
  return Object.entries(outputs).find(([key]) => key.includes(part))?.[1];
}

export const readStackOutputs: StackOutputsReader = async (stackName) => {
  const client = new CloudFormationClient({});
  try {
    const { Stacks = [] } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    return Object.fromEntries((Stacks[0]?.Outputs ?? []).flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])));
  } finally {
    client.destroy();
  }
};

/** The deployed usage plan's token keys (#adapters/usage-plan-token-keys); the outputs come from the stack when not known yet. */
function usagePlanTokenKeys(
  location: Extract<TableLocation, { kind: 'aws' }>,
  readOutputs: StackOutputsReader,
  sleep?: (ms: number) => Promise<void>,
): TokenKeys & { close(): void } {
  return gatewayTokenKeys({
    ...(location.gateway ? { gateway: location.gateway } : {}),
    locate: async () => {
      const gateway = gatewayOutputs(await readOutputs(location.stackName));
      if (!gateway) {
        throw new CommandError(
          `The AWS stack ${location.stackName} lacks an output whose key contains ${Object.values(GATEWAY_OUTPUTS).join(', ')}: deploy the stack again`,
        );
      }
      return gateway;
    },
    fail: (message) => new CommandError(message),
    ...(sleep ? { sleep } : {}),
  });
}

/** The context commands run in, for a located table; `close` lets the process exit at once. */
export function openContext(
  location: TableLocation,
  readOutputs: StackOutputsReader = readStackOutputs,
  sleep?: (ms: number) => Promise<void>,
): { context: DashboardContext; close(): void } {
  // Fewer attempts than the handlers: a stopped local stack should fail in a second, not after long retries.
  const db = createDocumentClient(location.kind === 'local' ? { ...localDynamoConfig(location.endpoint), maxAttempts: 2 } : undefined);
  const tokenKeys = location.kind === 'aws' ? usagePlanTokenKeys(location, readOutputs, sleep) : undefined;
  const sts = location.kind === 'aws' ? new STSClient({}) : undefined;
  const bucket = location.scripts;
  const s3 = bucket && createS3Client(bucket.endpoint ? { ...localS3Config(bucket.endpoint), maxAttempts: 2 } : {});
  return {
    context: {
      stores: createStores(db, location.tableName),
      ...(bucket && s3 ? { scripts: new S3ScriptStore(s3, bucket.bucketName) } : {}),
      now: () => unixSeconds(),
      tokenKeys: tokenKeys ?? LOCAL_TOKEN_KEYS,
      caller: sts ? awsCaller(sts) : async () => localCaller(),
      warn: (line) => void process.stderr.write(`${line}\n`),
      ...(location.loaderBaseUrl ? { loaderBaseUrl: location.loaderBaseUrl } : {}),
      // In AWS the secret lives in Secrets Manager, which the dashboard is not wired to yet (docs/free-keys.md).
      ...(location.kind === 'local' ? { keySecret: fileKeySecret() } : {}),
    },
    close: () => {
      db.destroy();
      s3?.destroy();
      tokenKeys?.close();
      sts?.destroy();
    },
  };
}

export { oneLine };
