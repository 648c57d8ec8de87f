import { type ExecutionRecord, isRecordKind, MAX_CLOCK_SKEW_SECONDS, MAX_RECORD_AGE_SECONDS, RECORD_SCHEMAS, type ValidationRecord } from '#schemas/telemetry';

/**
 * Ingest keeps what the detectors need of the loader's records (counters, last-seen times, hashes, hourly
 * windows), never the raw records.
 */

export interface Rejection {
  /** Position of the record in the batch. */
  index: number;
  reason: string;
}

/** A record with its position in the batch, so a later stage can still say which one it refused. */
export type Indexed<T> = T & { index: number };

export interface ParsedBatch {
  executions: Indexed<ExecutionRecord>[];
  validations: Indexed<ValidationRecord>[];
  rejections: Rejection[];
}

/**
 * Sort a batch into valid records of each kind and rejections that say what is wrong, so one bad record
 * does not cost the batch. `now` bounds `at` from both sides (MAX_CLOCK_SKEW_SECONDS ahead, MAX_RECORD_AGE_SECONDS back).
 */
export function parseTelemetryBatch(records: readonly unknown[], now: number): ParsedBatch {
  const batch: ParsedBatch = { executions: [], validations: [], rejections: [] };
  records.forEach((record, index) => {
    const kind = typeof record === 'object' && record !== null ? (record as { kind?: unknown }).kind : undefined;
    if (!isRecordKind(kind)) {
      batch.rejections.push({ index, reason: `kind must be one of ${Object.keys(RECORD_SCHEMAS).join(', ')}` });
      return;
    }
    const parsed = RECORD_SCHEMAS[kind].safeParse(record);
    if (!parsed.success) {
      batch.rejections.push({ index, reason: parsed.error.issues.map((issue) => issue.message).join('; ') });
      return;
    }
    if (parsed.data.at > now + MAX_CLOCK_SKEW_SECONDS) {
      batch.rejections.push({ index, reason: `at (${parsed.data.at}) is more than ${MAX_CLOCK_SKEW_SECONDS} s in the future` });
      return;
    }
    if (parsed.data.at < now - MAX_RECORD_AGE_SECONDS) {
      batch.rejections.push({ index, reason: `at (${parsed.data.at}) is more than ${MAX_RECORD_AGE_SECONDS / 86_400} days in the past` });
      return;
    }
    if (parsed.data.kind === 'execution') batch.executions.push({ ...parsed.data, index });
    else batch.validations.push({ ...parsed.data, index });
  });
  return batch;
}
