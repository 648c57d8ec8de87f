import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { vi } from 'vitest';
import type { EventItem } from '#adapters/layout';
import { keyOf } from '#adapters/layout';

/** Test data shared by the webhook delivery tests (unit and integration). */

export const FIXED_NOW = 1_700_000_000;
export const WEBHOOK_TOKEN = 'sEcReT-t0ken_ThatMustNeverBeLogged';
export const discordUrl = (id: string, token = WEBHOOK_TOKEN) => `https://discord.com/api/webhooks/${id}/${token}`;

let sequence = 0;

/** A stream record as Lambda hands it to the fan-out, with a fresh sequence number unless given. */
export function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  item: object,
  options: { eventID?: string; sequenceNumber?: string } = {},
): DynamoDBRecord {
  sequence += 1;
  const { pk, sk } = item as { pk?: unknown; sk?: unknown };
  return {
    eventID: options.eventID ?? `evt-${sequence}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: FIXED_NOW,
      Keys: marshall({ pk, sk }) as Record<string, AttributeValue>,
      NewImage: eventName === 'REMOVE' ? undefined : (marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>),
      SequenceNumber: options.sequenceNumber ?? String(1000 + sequence),
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2023-11-14T00:00:00.000',
  };
}

export const streamEvent = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

/** The version item Repository.uploadVersion writes. */
export function versionItem(projectId: string, versionNumber = 3, overrides: Record<string, unknown> = {}) {
  const id = `ver_${projectId}_${versionNumber}`;
  return {
    ...keyOf.version(projectId, id),
    entity: 'VERSION',
    projectId,
    id,
    version_number: versionNumber,
    uploaded_at: FIXED_NOW,
    size_bytes: 12_595,
    notes: 'Fixes the loader',
    ...overrides,
  };
}

/** An event item as an analytics detector writes it. */
export function keyAbuseItem(projectId: string): EventItem {
  return {
    ...keyOf.event(projectId, 'key_abuse', 'key_1#2023-11-14'),
    entity: 'EVENT',
    projectId,
    name: 'key_abuse',
    occurredAt: FIXED_NOW,
    data: { keyId: 'key_1', pattern: 'many_fingerprints', count: 9, threshold: 5, windowSeconds: 3600 },
    ttl: FIXED_NOW + 86_400,
  };
}

/** Everything written to stdout and stderr (where Powertools Logger prints) until restore(). */
export function captureLogs() {
  const chunks: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write),
  );
  return {
    text: () => chunks.join(''),
    /** Each JSON log line, parsed. */
    entries: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
