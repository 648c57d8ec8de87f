import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { CheckReport } from '#domain/key-check-model';
import { CheckTimingSchema } from '#schemas/telemetry';
import { ENTITY } from './layout';
import { matchesFilter } from './stream-events';

/**
 * The telemetry of counted checks, read back from the table's stream: a counted check's conditional write leaves
 * `lastCheck` on the key item (key-check-store.ts), and its MODIFY record carries the old and the new item. Only
 * key items' MODIFY records reach the ingest consumer (by the event-source mapping's filter in AWS, by the local
 * stream poller on DynamoDB Local); the webhook fan-out's filter (INSERT of versions and events) never matches them.
 */
export const CHECK_STREAM_FILTER_PATTERN = {
  eventName: ['MODIFY'],
  dynamodb: { NewImage: { entity: { S: [ENTITY.key] } } },
} as const;

/** What a stream record says happened: a counted check (of key `keyId`, at `at`, reported as `report`), or nothing to count. */
export type CheckReading = { kind: 'counted'; keyId: string; at: number; report: CheckReport } | { kind: 'ignored' } | { kind: 'invalid'; problem: string };

/**
 * The counted check a stream record holds, as the check wrote it; the domain makes its telemetry (checkTelemetry in
 * #domain/key-check). A key item changed by anything else (a revoke, an HWID reset, a bulk revoke) counts no use, so
 * it is ignored: a check is exactly a write that raised `current_uses`.
 */
export function readCheckRecord(record: DynamoDBRecord): CheckReading {
  const images = record.dynamodb;
  if (!matchesFilter(record, CHECK_STREAM_FILTER_PATTERN) || !images?.NewImage) return { kind: 'ignored' };
  const item = unmarshall(images.NewImage as Record<string, AttributeValue>);
  const old = images.OldImage ? unmarshall(images.OldImage as Record<string, AttributeValue>) : {};
  if (!(Number(item.current_uses ?? 0) > Number(old.current_uses ?? 0))) return { kind: 'ignored' };
  const check: unknown = item.lastCheck;
  if (typeof check !== 'object' || check === null) return { kind: 'invalid', problem: 'a counted check left no lastCheck' };
  const { executor, fingerprint, at, scriptHash, versionId, timing } = check as Record<string, unknown>;
  if (
    typeof executor !== 'string' ||
    typeof fingerprint !== 'string' ||
    typeof at !== 'number' ||
    typeof item.projectId !== 'string' ||
    typeof item.id !== 'string'
  ) {
    return { kind: 'invalid', problem: 'lastCheck lacks executor, fingerprint or at, or the key item its projectId or id' };
  }
  // The stub's figures, when they read as such: telemetry about telemetry never costs the check's records.
  const figures = timing === undefined ? undefined : CheckTimingSchema.safeParse(timing).data;
  const report: CheckReport = {
    project_id: item.projectId,
    executor,
    fingerprint,
    ...(typeof scriptHash === 'string' ? { script_hash: scriptHash } : {}),
    ...(typeof versionId === 'string' ? { version_id: versionId } : {}),
    ...(figures ? { timing: figures } : {}),
  };
  return { kind: 'counted', keyId: item.id, at, report };
}
