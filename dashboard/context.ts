import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, GetUsagePlanCommand } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { readFile } from 'node:fs/promises';
import { unixSeconds } from '#domain/model';
import type { StackInfo } from '#local/state-file';
import { createDocumentClient, localDynamoConfig } from '#store/client';
import { createStores, type Stores } from '#store/stores';

export const DEFAULT_STACK_NAME = 'ScriptDistributionDeveloperApi';

/** A failure that is not a typo on the command line (unknown owner, unreachable table): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/**
 * Making a new token usable at the gateway. In AWS the usage plan throttles by API key and the authorizer
 * names the token's SHA-256 as the key, so each token needs an API key with that value on the usage plan.
 * The local gateway has no usage plan, so there it is nothing to do.
 */
export interface TokenKeys {
  /** Fails, before the command writes anything, when tokens cannot be registered. */
  check(): Promise<void>;
  register(tokenHash: string): Promise<void>;
}

export const LOCAL_TOKEN_KEYS: TokenKeys = { check: async () => undefined, register: async () => undefined };

export interface DashboardContext {
  /** The table's stores: the dashboard's writes, tokens, projects, and telemetry (dashboard/commands/telemetry.ts). */
  stores: Stores;
  now: () => number;
  tokenKeys: TokenKeys;
}

export type TableLocation =
  | { kind: 'local'; endpoint: string; tableName: string }
  | { kind: 'aws'; tableName: string; stackName: string; usagePlanId?: string };

export type StackOutputs = Record<string, string>;
export type StackOutputsReader = (stackName: string) => Promise<StackOutputs>;

export interface LocateOptions {
  env: NodeJS.ProcessEnv;
  stateFile: string;
  readStackOutputs: StackOutputsReader;
}

/**
 * Where the table is, first match wins: `DYNAMODB_ENDPOINT` + `TABLE_NAME` (a local table named
 * explicitly), `TABLE_NAME` alone (a table in AWS), the running local stack's `.local/stack.json`, and
 * last the deployed stack's outputs in AWS.
 */
export async function locateTable({ env, stateFile, readStackOutputs }: LocateOptions): Promise<TableLocation> {
  const stackName = env.STACK_NAME || DEFAULT_STACK_NAME;
  if (env.DYNAMODB_ENDPOINT) {
    if (!env.TABLE_NAME) throw new CommandError('DYNAMODB_ENDPOINT is set but TABLE_NAME is not: set both, or neither to use .local/stack.json');
    return { kind: 'local', endpoint: env.DYNAMODB_ENDPOINT, tableName: env.TABLE_NAME };
  }
  if (env.TABLE_NAME) return { kind: 'aws', tableName: env.TABLE_NAME, stackName };

  const state = await readStateFile(stateFile);
  if (state) return { kind: 'local', ...state };

  let outputs: StackOutputs;
  try {
    outputs = await readStackOutputs(stackName);
  } catch (error) {
    throw new CommandError(
      `No local stack (${stateFile} not found) and the AWS stack ${stackName} could not be read (${oneLine(error)}): run npm start, or set DYNAMODB_ENDPOINT and TABLE_NAME`,
    );
  }
  const tableName = outputNamed(outputs, 'TableName');
  if (!tableName) throw new CommandError(`The AWS stack ${stackName} has no output whose key contains TableName`);
  return { kind: 'aws', tableName, stackName, usagePlanId: outputNamed(outputs, 'UsagePlanId') };
}

async function readStateFile(path: string): Promise<{ endpoint: string; tableName: string } | undefined> {
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
  const { dynamodbEndpoint, tableName } = (state ?? {}) as Partial<Record<keyof StackInfo, unknown>>;
  if (typeof dynamodbEndpoint !== 'string' || typeof tableName !== 'string') {
    throw new CommandError(`${path} lacks dynamodbEndpoint or tableName: restart npm start to rewrite it`);
  }
  return { endpoint: dynamodbEndpoint, tableName };
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

/** API keys on the deployed usage plan; the plan id comes from the stack's outputs when not known yet. */
export function usagePlanTokenKeys(location: Extract<TableLocation, { kind: 'aws' }>, readOutputs: StackOutputsReader): TokenKeys & { close(): void } {
  const client = new APIGatewayClient({});
  let usagePlanId = location.usagePlanId;
  return {
    async check() {
      usagePlanId ??= outputNamed(await readOutputs(location.stackName), 'UsagePlanId');
      if (!usagePlanId) throw new CommandError(`The AWS stack ${location.stackName} has no output whose key contains UsagePlanId`);
      await client.send(new GetUsagePlanCommand({ usagePlanId }));
    },
    async register(tokenHash) {
      if (!usagePlanId) throw new CommandError('Token keys were not checked before registering');
      const key = await client.send(
        new CreateApiKeyCommand({
          name: `dashboard-token-${tokenHash.slice(0, 16)}`,
          description: 'Usage-plan key of a developer API token (value: SHA-256 of the token)',
          value: tokenHash,
          enabled: true,
        }),
      );
      await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: key.id, keyType: 'API_KEY' }));
    },
    close: () => client.destroy(),
  };
}

/** The context commands run in, for a located table; `close` lets the process exit at once. */
export function openContext(location: TableLocation, readOutputs: StackOutputsReader = readStackOutputs): { context: DashboardContext; close(): void } {
  // Fewer attempts than the handlers: a stopped local stack should fail in a second, not after long retries.
  const db = createDocumentClient(location.kind === 'local' ? { ...localDynamoConfig(location.endpoint), maxAttempts: 2 } : undefined);
  const tokenKeys = location.kind === 'aws' ? usagePlanTokenKeys(location, readOutputs) : undefined;
  return {
    context: {
      stores: createStores(db, location.tableName),
      now: () => unixSeconds(),
      tokenKeys: tokenKeys ?? LOCAL_TOKEN_KEYS,
    },
    close: () => {
      db.destroy();
      tokenKeys?.close();
    },
  };
}

export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ').trim() || (error instanceof Error ? error.name : 'Unknown error');
}
