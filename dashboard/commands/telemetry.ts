import { createHash, randomBytes } from 'node:crypto';
import type * as z from 'zod/mini';
import { type FlagSpecs, type Flags, oneOf, UsageError, wholeNumber } from '#dashboard/args';
import { CommandError } from '#dashboard/context';
import { type DailyDetectionResult, runDailyDetection } from '#domain/analytics/daily';
import { type FiredEvent, ingestTelemetry } from '#domain/analytics/ingest';
import { parseTelemetryBatch } from '#domain/analytics/telemetry';
import type { TelemetryStore } from '#domain/ports';
import { dayStart, utcDate } from '#domain/time';
import {
  type ExecutionRecord,
  ExecutionRecordSchema,
  MAX_BATCH_RECORDS,
  VALIDATION_RESULTS,
  type ValidationRecord,
  ValidationRecordSchema,
} from '#schemas/telemetry';

/**
 * `telemetry execution`, `telemetry validation` and `detect daily`: the dashboard CLI stands in for the loader
 * side and the schedule. Each command checks every flag (`validate`, pure) before `run` reads or writes
 * anything, and sends its records through the same ingest function as the ingest Lambda.
 *
 * Results (one JSON object):
 * - telemetry commands: `{"accepted": N, "events": [{"name", "projectId", "dedupKey"}, ...]}`, the events this
 *   call fired (a condition that had already fired is not listed again; a summary of more than 5 of one kind
 *   also says how many it `summarizes`);
 * - detect daily: `{"date": "<day judged>", "projectsJudged": N, "events": [...]}`.
 */

/** What the telemetry commands need of the CLI's context. */
export interface TelemetryContext {
  stores: { telemetry: TelemetryStore };
  now: () => number;
}

export interface TelemetryCommand<Input, Result extends object> {
  name: string;
  flags: FlagSpecs;
  validate(flags: Flags): Input;
  run(context: TelemetryContext, input: Input): Promise<Result>;
}

export interface IngestSummary {
  accepted: number;
  events: FiredEvent[];
}

/** Beyond this a timestamp is in milliseconds, not Unix seconds. */
const MAX_UNIX_SECONDS = 99_999_999_999;
const MAX_FINGERPRINT_LENGTH = 256;

/** A flag checked by the ingest schema's own rule for the field it fills, so the CLI and ingest cannot disagree. */
function field(flag: string, schema: z.ZodMiniType, text: string): string {
  const parsed = schema.safeParse(text);
  if (!parsed.success || typeof parsed.data !== 'string')
    throw new UsageError(`--${flag}: ${parsed.error?.issues[0]?.message ?? 'invalid value'}; got "${text}"`);
  return parsed.data;
}

function optionalField(flags: Flags, flag: string, schema: z.ZodMiniType): string | undefined {
  const text = flags.optional(flag);
  return text === undefined ? undefined : field(flag, schema, text);
}

const count = (flags: Flags) => {
  const text = flags.optional('count');
  return text === undefined ? 1 : wholeNumber('count', text, { min: 1, max: MAX_BATCH_RECORDS });
};

const at = (flags: Flags) => {
  const text = flags.optional('at');
  return text === undefined ? undefined : wholeNumber('at', text, { min: 0, max: MAX_UNIX_SECONDS });
};

/** The fingerprint as the loader sends it: SHA-256 of the raw client fingerprint; the raw value is never stored. */
const hashFingerprint = (raw: string) => createHash('sha256').update(raw).digest('hex');

async function requireProject(context: TelemetryContext, projectId: string): Promise<void> {
  if (!(await context.stores.telemetry.projectExists(projectId))) throw new CommandError(`Project ${projectId} not found: create one with "project create"`);
}

/** Ingest the records, refusing all of them (before any write) if ingest would reject one, e.g. `--at` in the future. */
async function ingestAll(context: TelemetryContext, records: readonly (ExecutionRecord | ValidationRecord)[]): Promise<IngestSummary> {
  const now = context.now();
  const [rejection] = parseTelemetryBatch(records, now).rejections;
  if (rejection) throw new UsageError(rejection.reason);
  const { accepted, events } = await ingestTelemetry(context.stores.telemetry, records, now);
  return { accepted, events };
}

const execution = ExecutionRecordSchema.shape;
const validation = ValidationRecordSchema.shape;

interface ExecutionInput {
  record: Omit<ExecutionRecord, 'at'>;
  at: number | undefined;
  count: number;
}

/**
 * `telemetry execution --project ID --executor NAME [--key ID] [--hash HASH] [--script ID] [--version ID] [--at UNIX] [--count N]`:
 * N identical executions (default 1) at `--at` (default now); the script id defaults to the project id.
 */
export const telemetryExecution: TelemetryCommand<ExecutionInput, IngestSummary> = {
  name: 'telemetry execution',
  flags: {
    project: { required: true, placeholder: 'ID' },
    executor: { required: true, placeholder: 'NAME' },
    key: { placeholder: 'ID' },
    hash: { placeholder: 'HASH' },
    script: { placeholder: 'ID' },
    version: { placeholder: 'ID' },
    at: { placeholder: 'UNIX' },
    count: { placeholder: 'N' },
  },
  validate: (flags) => ({
    record: {
      kind: 'execution',
      projectId: field('project', execution.projectId, flags.required('project')),
      executor: field('executor', execution.executor, flags.required('executor')),
      keyId: optionalField(flags, 'key', execution.keyId),
      scriptHash: optionalField(flags, 'hash', execution.scriptHash),
      scriptId: optionalField(flags, 'script', execution.scriptId),
      versionId: optionalField(flags, 'version', execution.versionId),
    },
    at: at(flags),
    count: count(flags),
  }),
  async run(context, input) {
    await requireProject(context, input.record.projectId);
    const record: ExecutionRecord = { ...input.record, at: input.at ?? context.now() };
    return ingestAll(
      context,
      Array.from({ length: input.count }, () => record),
    );
  },
};

interface ValidationInput {
  record: Omit<ValidationRecord, 'at' | 'fingerprint'>;
  /** Hashed; undefined: every record gets a fingerprint of its own. */
  fingerprint: string | undefined;
  at: number | undefined;
  count: number;
}

/**
 * `telemetry validation --project ID --key ID --result R --executor NAME [--fingerprint F] [--at UNIX] [--count N]`:
 * N validations (default 1) at `--at` (default now). `--fingerprint` is the raw client fingerprint and is sent
 * hashed, as the loader does; all N records carry it (one client validating N times). Without it each record
 * gets a random fingerprint of its own (N different clients), so `--count 6` alone makes many_fingerprints fire.
 */
export const telemetryValidation: TelemetryCommand<ValidationInput, IngestSummary> = {
  name: 'telemetry validation',
  flags: {
    project: { required: true, placeholder: 'ID' },
    key: { required: true, placeholder: 'ID' },
    result: { required: true, placeholder: VALIDATION_RESULTS.join('|') },
    executor: { required: true, placeholder: 'NAME' },
    fingerprint: { placeholder: 'F' },
    at: { placeholder: 'UNIX' },
    count: { placeholder: 'N' },
  },
  validate(flags) {
    const fingerprint = flags.optional('fingerprint');
    if (fingerprint !== undefined && (fingerprint.trim() === '' || fingerprint.length > MAX_FINGERPRINT_LENGTH)) {
      throw new UsageError(`--fingerprint must be 1-${MAX_FINGERPRINT_LENGTH} characters`);
    }
    return {
      record: {
        kind: 'validation',
        projectId: field('project', validation.projectId, flags.required('project')),
        keyId: field('key', validation.keyId, flags.required('key')),
        result: oneOf('result', flags.required('result'), VALIDATION_RESULTS),
        executor: field('executor', validation.executor, flags.required('executor')),
      },
      fingerprint: fingerprint === undefined ? undefined : hashFingerprint(fingerprint),
      at: at(flags),
      count: count(flags),
    };
  },
  async run(context, input) {
    await requireProject(context, input.record.projectId);
    const { projectId, keyId } = input.record;
    const [usage] = await context.stores.telemetry.keyUsage([{ projectId, keyId }]);
    if (!usage) throw new CommandError(`Key ${keyId} is not a key of project ${projectId}: issue one with "keys issue"`);
    const at = input.at ?? context.now();
    const records = Array.from(
      { length: input.count },
      (): ValidationRecord => ({
        ...input.record,
        fingerprint: input.fingerprint ?? hashFingerprint(randomBytes(16).toString('hex')),
        at,
      }),
    );
    return ingestAll(context, records);
  },
};

/**
 * `detect daily [--date YYYY-MM-DD]`: runs the daily detector now, as the schedule does after midnight of
 * `--date` (default: today, UTC), so it judges the day before `--date` against the day before that.
 */
export const detectDaily: TelemetryCommand<{ today: string | undefined }, DailyDetectionResult> = {
  name: 'detect daily',
  flags: { date: { placeholder: 'YYYY-MM-DD' } },
  validate(flags) {
    const date = flags.optional('date');
    if (date !== undefined && dayStart(date) === undefined) throw new UsageError(`--date must be a real day as YYYY-MM-DD; got "${date}"`);
    return { today: date };
  },
  run: (context, input) => runDailyDetection(context.stores.telemetry, input.today ?? utcDate(context.now()), context.now()),
};
