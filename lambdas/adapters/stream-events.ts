import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { type ProjectEvent, ProjectEventSchema } from '#schemas/events';
import { ENTITY } from './layout';

/**
 * The stream records that make events: a version item inserted (`version_deployed`) or an event item a
 * detector inserted (its `name`). Everything else on the stream (webhook changes, delivery claims, keys,
 * rate-limit windows) is filtered out before the fan-out runs: by the event-source mapping in AWS, by the
 * local stream poller on DynamoDB Local. Both read this one pattern (Lambda's event-filtering syntax).
 */
export const STREAM_FILTER_PATTERN = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { entity: { S: [ENTITY.version, ENTITY.event] } } },
} as const;

/** A Lambda event-filtering pattern made of exact-match value lists, the only rule the pattern above uses. */
export type FilterPattern = { readonly [field: string]: readonly (string | number | boolean)[] | FilterPattern };

/** Whether `record` matches `pattern` the way Lambda's event filtering does for exact-match rules. */
export function matchesFilter(record: unknown, pattern: FilterPattern): boolean {
  if (typeof record !== 'object' || record === null) return false;
  return Object.entries(pattern).every(([field, rule]) => {
    const value = (record as Record<string, unknown>)[field];
    if (Array.isArray(rule)) return (rule as readonly unknown[]).includes(value);
    return matchesFilter(value, rule as FilterPattern);
  });
}

export type RecordReading = { kind: 'event'; event: ProjectEvent } | { kind: 'ignored' } | { kind: 'invalid'; problem: string };

/** The event a stream record makes, if it makes one. */
export function readStreamRecord(record: DynamoDBRecord): RecordReading {
  if (!matchesFilter(record, STREAM_FILTER_PATTERN) || !record.dynamodb?.NewImage) return { kind: 'ignored' };
  // Lambda's stream JSON and the SDK's AttributeValue differ only in how binaries are typed; no event item holds one.
  const item = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>);
  const candidate =
    item.entity === ENTITY.version
      ? {
          name: 'version_deployed',
          projectId: item.projectId,
          occurredAt: item.uploaded_at,
          data: { versionId: item.id, versionNumber: item.version_number, sizeBytes: item.size_bytes, notes: item.notes ?? '' },
        }
      : { name: item.name, projectId: item.projectId, occurredAt: item.occurredAt, data: item.data };
  const parsed = ProjectEventSchema.safeParse(candidate);
  if (!parsed.success) return { kind: 'invalid', problem: parsed.error.issues.flatMap((issue) => describeIssue(issue, [])).join('; ') };
  return { kind: 'event', event: parsed.data as ProjectEvent };
}

type Issue = { path: PropertyKey[]; message: string; code?: string; errors?: Issue[][] };

/**
 * What is wrong, field by field. Analytics event data is one occurrence or a summary (a union), whose own message
 * is only "Invalid input": the problems of its first shape, one occurrence, are what names the field.
 */
function describeIssue(issue: Issue, at: PropertyKey[]): string[] {
  const path = [...at, ...issue.path];
  const [firstShape] = issue.code === 'invalid_union' ? (issue.errors ?? []) : [];
  if (firstShape && firstShape.length > 0) return firstShape.flatMap((inner) => describeIssue(inner, path));
  return [`${path.map(String).join('.')}: ${issue.message}`];
}
