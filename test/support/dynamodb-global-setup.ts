import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '#local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    /** False when DYNAMODB_ENDPOINT named one the developer keeps open: its settings are not this project's. */
    dynamodbStartedByRun: boolean;
  }
}

/**
 * One DynamoDB Local for the whole integration run (test files keep apart by table name), or the one that
 * DYNAMODB_ENDPOINT already names, so a developer can point the run at a DynamoDB Local they keep open.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const givenEndpoint = process.env.DYNAMODB_ENDPOINT;
  if (givenEndpoint) {
    project.provide('dynamodbEndpoint', givenEndpoint);
    project.provide('dynamodbStartedByRun', false);
    return undefined;
  }

  const dynamodb = await startDynamoDbLocal();
  // Set before the test workers start, so they inherit it along with the provided value.
  process.env.DYNAMODB_ENDPOINT = dynamodb.endpoint;
  project.provide('dynamodbEndpoint', dynamodb.endpoint);
  project.provide('dynamodbStartedByRun', true);
  return async () => {
    delete process.env.DYNAMODB_ENDPOINT;
    await dynamodb.stop();
  };
}
