import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Attempts per request: the SDK retries throttles and 5xx with backoff before a store sees an error. */
const DYNAMODB_MAX_ATTEMPTS = 5;

/**
 * How to reach DynamoDB Local (the local stack, the tests, the bench, the dashboard): it accepts any credentials
 * and region. In AWS the client takes both from the Lambda runtime instead.
 */
export function localDynamoConfig(endpoint: string): DynamoDBClientConfig & { endpoint: string; region: string } {
  return { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: DYNAMODB_MAX_ATTEMPTS };
}

/** The document client every store uses; `undefined` attributes are dropped rather than refused. */
export function createDocumentClient(config: DynamoDBClientConfig = { maxAttempts: DYNAMODB_MAX_ATTEMPTS }): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(config), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
