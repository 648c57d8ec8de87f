import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

/** Transactions retried on a conflict with another transaction (which DynamoDB Local reports more often than AWS). */
export const TRANSACTION_ATTEMPTS = 8;

/**
 * A write whose condition failed, alone or as part of a transaction. With `items`, only a failed condition of those
 * items of a transaction counts: another's (an audit entry whose key is taken) stays an error.
 */
export function isConditionFailure(error: unknown, items?: readonly number[]): error is ConditionalCheckFailedException | TransactionCanceledException {
  if (error instanceof ConditionalCheckFailedException) return true;
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason, index) => reason.Code === 'ConditionalCheckFailed' && (items === undefined || items.includes(index)))
  );
}

export function isTransactionConflict(error: unknown): boolean {
  if (error instanceof TransactionCanceledException) return (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
  return error instanceof Error && error.name === 'TransactionConflictException';
}

/** A short random pause that doubles with each attempt, so writers that collided do not collide again. */
export const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));

/** A transaction, retried on conflicts with other transactions. */
export async function transact(db: DynamoDBDocumentClient, input: TransactWriteCommandInput): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand(input));
      return;
    } catch (error) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isTransactionConflict(error)) throw error;
      await backoff(attempt);
    }
  }
}

/**
 * A conditional write (or transaction) whose failed condition means there is nothing to do; true when it was
 * written. `items` as for isConditionFailure.
 */
export async function ifCondition(write: Promise<unknown>, items?: readonly number[]): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error, items)) return false;
    throw error;
  }
}
