import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type Shard,
  type ShardIteratorType,
  type AttributeValue as StreamAttributeValue,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type FilterPattern, matchesFilter, STREAM_FILTER_PATTERN } from '#adapters/stream-events';
import { FANOUT_STREAM } from '#domain/webhooks/delivery-settings';

/**
 * Feeds DynamoDB Local's stream to a stream handler the way Lambda's DynamoDB event-source mapping feeds the
 * deployed one: records in order per shard, as Lambda's DynamoDBStreamEvent JSON, only those matching the
 * mapping's filter, batches of the mapping's size, and a batch whose handler reports failures retried from the
 * first failed record (as many times as the mapping retries, then skipped with a log line, as an on-failure
 * destination would take it).
 * Shards are followed as they close and split: a child shard is read from its start once its parent is done.
 */

export interface StreamPollerOptions {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined> | Promise<void>;
  pollIntervalMs?: number;
  /** LATEST (default) reads what is written from now on; TRIM_HORIZON replays the stream's last 24 hours too. */
  startingPosition?: 'LATEST' | 'TRIM_HORIZON';
  onError?: (message: string, error?: unknown) => void;
  /** The event-source mapping's filter, batch size and retries (default: the webhook fan-out's). */
  filter?: FilterPattern;
  batchSize?: number;
  retryAttempts?: number;
  /** false: nothing is read until `drain()` is called (a test that injects the handler's time decides when). */
  autoPoll?: boolean;
}

export interface StreamPoller {
  stop(): Promise<void>;
  /** Reads every shard until a round finds nothing new; resolves with the records read (filtered or not). */
  drain(): Promise<number>;
}

interface ShardReader {
  shardId: string;
  parentShardId?: string;
  iterator?: string;
  lastSequenceNumber?: string;
  /** Closed and read to its end. */
  done: boolean;
}

/** Starts polling once every open shard has its iterator, so nothing written after this resolves is missed. */
export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const { streams, handler } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const retryAttempts = options.retryAttempts ?? FANOUT_STREAM.retryAttempts;
  const filter = options.filter ?? STREAM_FILTER_PATTERN;
  const batchSize = options.batchSize ?? FANOUT_STREAM.batchSize;
  const onError = options.onError ?? ((message, error) => console.error(`[stream-poller] ${message}`, error ?? ''));

  const table = await options.dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream`);

  const readers = new Map<string, ShardReader>();

  const iteratorFor = async (shardId: string, type: ShardIteratorType, sequenceNumber?: string) =>
    (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: sequenceNumber })))
      .ShardIterator;

  const listShards = async (): Promise<Shard[]> => {
    const shards: Shard[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const page = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }));
      shards.push(...(page.StreamDescription?.Shards ?? []));
      exclusiveStartShardId = page.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    return shards;
  };

  /** Shards not seen before; at start, closed ones are history (LATEST) or read in order (TRIM_HORIZON). */
  const discoverShards = async (atStart: boolean) => {
    for (const shard of await listShards()) {
      if (!shard.ShardId || readers.has(shard.ShardId)) continue;
      const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
      const reader: ShardReader = { shardId: shard.ShardId, parentShardId: shard.ParentShardId, done: false };
      readers.set(shard.ShardId, reader);
      if (atStart && options.startingPosition !== 'TRIM_HORIZON') {
        if (closed) reader.done = true;
        else reader.iterator = await iteratorFor(shard.ShardId, 'LATEST');
      }
    }
  };

  /** A shard is read once its parent (if we know it) is done, so a key's changes arrive in order across a split. */
  const readable = (reader: ShardReader) => {
    if (reader.done) return false;
    const parent = reader.parentShardId ? readers.get(reader.parentShardId) : undefined;
    return !parent || parent.done;
  };

  const deliver = async (records: DynamoDBRecord[]) => {
    let pending = records.filter((record) => matchesFilter(record, filter));
    for (let attempt = 0; pending.length > 0; attempt++) {
      let failedFrom: number;
      try {
        const response = await handler({ Records: pending });
        const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        failedFrom = pending.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      } catch (error) {
        onError('stream handler threw; batch retried', error);
        failedFrom = 0;
      }
      if (failedFrom < 0) return;
      if (attempt >= retryAttempts) {
        onError(`${pending.length - failedFrom} stream record(s) still failing after ${retryAttempts} retries; skipped`);
        return;
      }
      // Like Lambda: the batch resumes at the first failed record, so the ones after it are handed over again.
      pending = pending.slice(failedFrom);
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  };

  /** One page of the shard handed over; the number of records it held. */
  const readShard = async (reader: ShardReader): Promise<number> => {
    reader.iterator ??= await iteratorFor(reader.shardId, 'TRIM_HORIZON');
    if (!reader.iterator) {
      reader.done = true;
      return 0;
    }
    let page: GetRecordsCommandOutput;
    try {
      page = await streams.send(new GetRecordsCommand({ ShardIterator: reader.iterator, Limit: batchSize }));
    } catch (error) {
      if (!(error instanceof ExpiredIteratorException)) throw error;
      reader.iterator = reader.lastSequenceNumber
        ? await iteratorFor(reader.shardId, 'AFTER_SEQUENCE_NUMBER', reader.lastSequenceNumber)
        : await iteratorFor(reader.shardId, 'LATEST');
      return 0;
    }
    const records = (page.Records ?? []).map((record) => lambdaRecord(record, streamArn));
    if (records.length > 0) {
      await deliver(records);
      reader.lastSequenceNumber = records.at(-1)?.dynamodb?.SequenceNumber;
    }
    reader.iterator = page.NextShardIterator;
    if (!reader.iterator) reader.done = true;
    return records.length;
  };

  await discoverShards(true);

  let running = true;
  let wake: (() => void) | undefined;
  // Rounds never overlap: the loop's and drain()'s take turns, so each shard's records go over once, in order.
  let turn: Promise<unknown> = Promise.resolve();
  const round = (): Promise<number> => {
    const next = turn.then(async () => {
      await discoverShards(false);
      let read = 0;
      for (const reader of readers.values()) {
        if (running && readable(reader)) read += await readShard(reader);
      }
      return read;
    });
    turn = next.catch(() => undefined);
    return next;
  };
  const loop = (async () => {
    while (running && options.autoPoll !== false) {
      try {
        await round();
      } catch (error) {
        onError('polling the stream failed; trying again', error);
      }
      if (running)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollIntervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      await turn;
    },
    async drain() {
      let total = 0;
      for (let read = await round(); read > 0; read = await round()) total += read;
      return total;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Streams API record in the JSON shape Lambda hands a stream handler. */
export function lambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const stream = record.dynamodb ?? {};
  const image = (attributes: Record<string, StreamAttributeValue> | undefined) =>
    attributes ? Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, lambdaAttribute(value)])) : undefined;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: stream.ApproximateCreationDateTime ? Math.floor(stream.ApproximateCreationDateTime.getTime() / 1000) : undefined,
      Keys: image(stream.Keys),
      NewImage: image(stream.NewImage),
      OldImage: image(stream.OldImage),
      SequenceNumber: stream.SequenceNumber,
      SizeBytes: stream.SizeBytes,
      StreamViewType: stream.StreamViewType,
    },
  };
}

/** The SDK gives binaries as bytes; Lambda's JSON gives them as base64. Everything else is the same. */
function lambdaAttribute(value: StreamAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(lambdaAttribute) };
  if (value.M !== undefined) return { M: Object.fromEntries(Object.entries(value.M).map(([name, inner]) => [name, lambdaAttribute(inner)])) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  throw new Error('Unknown attribute value type in a stream record');
}
