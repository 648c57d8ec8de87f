import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * SDK client settings from the environment: in AWS the runtime's region and role; locally and in tests
 * `DYNAMODB_ENDPOINT` points at DynamoDB Local, which accepts any credentials.
 */
export function dynamoConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDBClientConfig {
  const endpoint = env.DYNAMODB_ENDPOINT;
  if (!endpoint) return { maxAttempts: 5 };
  return {
    endpoint,
    region: env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 5,
  };
}

export function createDocumentClient(config: DynamoDBClientConfig = dynamoConfigFromEnv()): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(config), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

export function tableNameFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const name = env.TABLE_NAME;
  if (!name) throw new Error('TABLE_NAME is not set');
  return name;
}
