import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type _Record, DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lambdaRecord, type StreamPoller, startStreamPoller } from '#local/stream-poller';

const dynamodb = mockClient(DynamoDBClient);
const streams = mockClient(DynamoDBStreamsClient);
const STREAM_ARN = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2023-11-14T00:00:00.000';

/** A Streams API record of an inserted item. */
function sdkRecord(sequenceNumber: string, entity: string): _Record {
  return {
    eventID: `e${sequenceNumber}`,
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: new Date(1_700_000_000_000),
      Keys: marshall({ pk: `PROJECT#p${sequenceNumber}`, sk: 'X' }),
      NewImage: marshall({ pk: `PROJECT#p${sequenceNumber}`, sk: 'X', entity }),
      SequenceNumber: sequenceNumber,
      SizeBytes: 10,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const openShard = (id: string, parent?: string) => ({ ShardId: id, ParentShardId: parent, SequenceNumberRange: { StartingSequenceNumber: '1' } });
const closedShard = (id: string) => ({ ShardId: id, SequenceNumberRange: { StartingSequenceNumber: '1', EndingSequenceNumber: '9' } });

let poller: StreamPoller | undefined;
const handed: string[][] = [];
let respond: (records: DynamoDBRecord[]) => DynamoDBBatchResponse = () => ({ batchItemFailures: [] });

async function start() {
  poller = await startStreamPoller({
    dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
    streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
    tableName: 't',
    pollIntervalMs: 5,
    handler: async (event) => {
      handed.push(event.Records.map((record) => record.dynamodb?.SequenceNumber ?? ''));
      return respond(event.Records);
    },
    onError: () => undefined,
  });
}

beforeEach(() => {
  dynamodb.reset();
  streams.reset();
  handed.length = 0;
  respond = () => ({ batchItemFailures: [] });
  dynamodb.on(DescribeTableCommand).resolves({ Table: { LatestStreamArn: STREAM_ARN } });
  streams.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'idle' });
});

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

describe('stream poller', () => {
  it('starts open shards at LATEST, skips closed ones, and hands over only records the filter passes', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [closedShard('old'), openShard('s1', 'old')] } });
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-s1' });
    streams.on(GetRecordsCommand, { ShardIterator: 'it-s1' }).resolves({
      Records: [sdkRecord('1', 'VERSION'), sdkRecord('2', 'DELIVERY'), sdkRecord('3', 'EVENT')],
      NextShardIterator: 'idle',
    });

    await start();
    await expect.poll(() => handed, { timeout: 30_000 }).toEqual([['1', '3']]);
    expect(streams.commandCalls(GetShardIteratorCommand).map((call) => [call.args[0].input.ShardId, call.args[0].input.ShardIteratorType])).toEqual([
      ['s1', 'LATEST'],
    ]);
  });

  it('hands a batch over again from its first failed record, as Lambda retries a stream batch', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [openShard('s1')] } });
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-s1' });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'it-s1' })
      .resolves({ Records: ['1', '2', '3'].map((n) => sdkRecord(n, 'VERSION')), NextShardIterator: 'idle' });
    let failures = 1;
    respond = (records) => ({ batchItemFailures: failures-- > 0 ? [{ itemIdentifier: records[1]?.dynamodb?.SequenceNumber ?? '' }] : [] });

    await start();
    await expect
      .poll(() => handed, { timeout: 30_000 })
      .toEqual([
        ['1', '2', '3'],
        ['2', '3'],
      ]);
  });

  it('follows a shard split: the child is read from its start once the parent is closed', async () => {
    streams
      .on(DescribeStreamCommand)
      .resolvesOnce({ StreamDescription: { Shards: [openShard('s1')] } })
      .resolves({ StreamDescription: { Shards: [closedShard('s1'), openShard('s2', 's1')] } });
    streams.on(GetShardIteratorCommand, { ShardId: 's1' }).resolves({ ShardIterator: 'it-s1' });
    streams.on(GetShardIteratorCommand, { ShardId: 's2' }).resolves({ ShardIterator: 'it-s2' });
    streams.on(GetRecordsCommand, { ShardIterator: 'it-s1' }).resolves({ Records: [sdkRecord('1', 'VERSION')], NextShardIterator: undefined });
    streams.on(GetRecordsCommand, { ShardIterator: 'it-s2' }).resolves({ Records: [sdkRecord('2', 'EVENT')], NextShardIterator: 'idle' });

    await start();
    await expect.poll(() => handed, { timeout: 30_000 }).toEqual([['1'], ['2']]);
    expect(streams.commandCalls(GetShardIteratorCommand, { ShardId: 's2' })[0]?.args[0].input.ShardIteratorType).toBe('TRIM_HORIZON');
  });
});

describe('lambdaRecord', () => {
  it('gives the record the JSON shape Lambda hands a stream handler: epoch seconds, base64 binaries, the stream ARN', () => {
    const record = sdkRecord('7', 'VERSION');
    record.dynamodb = {
      ...record.dynamodb,
      NewImage: { ...record.dynamodb?.NewImage, blob: { B: Uint8Array.from([1, 2, 3]) }, list: { L: [{ N: '1' }, { BS: [Uint8Array.from([255])] }] } },
    };
    expect(lambdaRecord(record, STREAM_ARN)).toMatchObject({
      eventID: 'e7',
      eventName: 'INSERT',
      eventSourceARN: STREAM_ARN,
      dynamodb: {
        ApproximateCreationDateTime: 1_700_000_000,
        SequenceNumber: '7',
        NewImage: { entity: { S: 'VERSION' }, blob: { B: 'AQID' }, list: { L: [{ N: '1' }, { BS: ['/w=='] }] } },
      },
    });
  });
});

describe('stream poller read by hand (autoPoll: false), as a test or a bench that injects time drives it', () => {
  it('hands over nothing until drain(), then everything the shard holds, through its own filter', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [openShard('s1')] } });
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-s1' });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'it-s1' })
      .resolves({ Records: [sdkRecord('1', 'KEY'), sdkRecord('2', 'VERSION')], NextShardIterator: 'it-s1b' });
    streams.on(GetRecordsCommand, { ShardIterator: 'it-s1b' }).resolves({ Records: [sdkRecord('3', 'KEY')], NextShardIterator: 'idle' });
    poller = await startStreamPoller({
      dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
      streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
      tableName: 't',
      autoPoll: false,
      filter: { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['KEY'] } } } },
      handler: async (event) => {
        handed.push(event.Records.map((record) => record.dynamodb?.SequenceNumber ?? ''));
      },
      onError: () => undefined,
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(handed).toEqual([]);
    expect(await poller.drain()).toBe(3);
    expect(handed).toEqual([['1'], ['3']]);
  });
});
