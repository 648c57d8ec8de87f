import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';

/**
 * DynamoDB failures injected below the SDK: a transport (the client's `requestHandler`) that answers chosen
 * calls with DynamoDB's own error responses and passes the rest on (to DynamoDB Local, or to a scripted answer
 * in unit tests). Everything above it is the product's real client: its `maxAttempts`, the SDK's retry
 * strategy and backoff, its error deserialisation.
 */

type Transport = DynamoDBClient['config']['requestHandler'];
type TransportRequest = Parameters<Transport['handle']>[0];
type TransportResult = Awaited<ReturnType<Transport['handle']>>;

export interface DynamoFault {
  status: number;
  /** The `__type` DynamoDB puts in the JSON body; the SDK turns it into the exception class. */
  type: string;
  message: string;
}

/** Byte-for-byte the error bodies DynamoDB sends for these failures. */
export const DYNAMO_FAULTS = {
  ProvisionedThroughputExceededException: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  ThrottlingException: { status: 400, type: 'com.amazon.coral.availability#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  InternalServerError: { status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
} as const satisfies Record<string, DynamoFault>;

export type DynamoFaultName = keyof typeof DYNAMO_FAULTS;

/** One call as the transport saw it: the operation (`GetItem`, `UpdateItem`, ...) and whether it was failed. */
interface TransportCall {
  operation: string;
  injected?: DynamoFaultName;
}

export interface FaultyClientOptions {
  /** Decides, per attempt, whether this call fails and how; `body` is the request's JSON text (retries repeat it). */
  fault: (operation: string, call: number, body: string) => DynamoFaultName | undefined;
  /** Where calls that are not failed go: DynamoDB Local's endpoint. */
  endpoint?: string;
  /** Or, without an endpoint, the JSON body of a successful answer per operation. */
  answer?: (operation: string, request: Record<string, unknown>) => unknown;
  /** Client settings over the product's own (`localDynamoConfig`, whose retries are the AWS runtime's). */
  config?: DynamoDBClientConfig;
}

export interface FaultyClient {
  db: DynamoDBDocumentClient;
  calls: TransportCall[];
  destroy(): void;
}

/** A document client configured as the product configures it, whose transport injects `options.fault`. */
export function faultyDocumentClient(options: FaultyClientOptions): FaultyClient {
  const calls: TransportCall[] = [];
  const endpoint = options.endpoint ?? 'http://127.0.0.1:9';
  const baseConfig = localDynamoConfig(endpoint);
  const passThrough = options.endpoint ? new DynamoDBClient(baseConfig) : undefined;

  const transport: Transport = {
    async handle(request: TransportRequest, handlerOptions): Promise<TransportResult> {
      const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? 'unknown';
      const text = bodyText(request.body);
      const injected = options.fault(operation, calls.length, text);
      calls.push({ operation, injected });
      if (injected) return jsonResponse(DYNAMO_FAULTS[injected].status, { __type: DYNAMO_FAULTS[injected].type, message: DYNAMO_FAULTS[injected].message });
      if (passThrough) return passThrough.config.requestHandler.handle(request, handlerOptions);
      return jsonResponse(200, options.answer?.(operation, JSON.parse(text) as Record<string, unknown>) ?? {});
    },
  };

  const db = createDocumentClient({ ...baseConfig, ...options.config, requestHandler: transport });
  return {
    db,
    calls,
    destroy: () => {
      db.destroy();
      passThrough?.destroy();
    },
  };
}

/** The request's JSON: the SDK hands the transport a string or bytes. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return '{}';
}

function jsonResponse(statusCode: number, body: unknown): TransportResult {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return {
    response: {
      statusCode,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(bytes.length), 'x-amzn-requestid': 'INJECTED' },
      body: bytes,
    },
  };
}
