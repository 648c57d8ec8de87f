import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * The SQS client of the functions that send to a queue (the fan-out, the delivery, the loader's refusal telemetry), one
 * per container: apart from runtime/aws.ts so that no other function loads the SQS SDK at its cold start.
 */
let sqs: SQSClient | undefined;
export const awsSqs = (): SQSClient => (sqs ??= new SQSClient({}));
