import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { localDynamoConfig } from '#adapters/client';
import { DYNAMODB_LOCAL, ensureDynamoDbLocalJar, filesManifestSha256, findJava, startDynamoDbLocal } from '#local/dynamodb-local';

type Item = Record<string, AttributeValue>;

interface StreamRecord {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  dynamodb: { Keys: Item; NewImage?: Item; OldImage?: Item; StreamViewType: string };
}

/**
 * DynamoDB Streams over its JSON protocol, because @aws-sdk/client-dynamodb-streams is not a dependency.
 * DynamoDB Local wants credentials named in the Authorization header but does not check the signature.
 */
async function streamsApi<Output>(endpoint: string, operation: string, input: object): Promise<Output> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(input),
  });
  const body: unknown = await response.json();
  if (!response.ok) throw new Error(`DynamoDB Streams ${operation} failed (${response.status}): ${JSON.stringify(body)}`);
  return body as Output;
}

/** Every record the stream holds, read from the start of each shard. */
async function readStream(endpoint: string, streamArn: string): Promise<StreamRecord[]> {
  const { StreamDescription } = await streamsApi<{ StreamDescription: { Shards: { ShardId: string }[] } }>(endpoint, 'DescribeStream', {
    StreamArn: streamArn,
  });
  const records: StreamRecord[] = [];
  for (const { ShardId } of StreamDescription.Shards) {
    const { ShardIterator } = await streamsApi<{ ShardIterator: string }>(endpoint, 'GetShardIterator', {
      StreamArn: streamArn,
      ShardId,
      ShardIteratorType: 'TRIM_HORIZON',
    });
    const { Records } = await streamsApi<{ Records: StreamRecord[] }>(endpoint, 'GetRecords', { ShardIterator });
    records.push(...Records);
  }
  return records;
}

describe('DynamoDB Local started by the integration global setup', () => {
  const endpoint = inject('dynamodbEndpoint');
  const client = new DynamoDBClient(localDynamoConfig(endpoint));
  const tableName = `dynamodb-local-${randomUUID().slice(0, 8)}`;
  let streamArn: string;

  beforeAll(async () => {
    const { TableDescription } = await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'owner', AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [{ IndexName: 'byOwner', KeySchema: [{ AttributeName: 'owner', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    expect(TableDescription?.LatestStreamArn).toBeDefined();
    streamArn = TableDescription?.LatestStreamArn ?? '';
  });

  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
    client.destroy();
  });

  it('answers ListTables at the injected endpoint', async () => {
    expect(process.env.DYNAMODB_ENDPOINT).toBe(endpoint);
    const { TableNames } = await client.send(new ListTablesCommand({}));
    expect(TableNames).toContain(tableName);
  });

  it('serves a global secondary index', async () => {
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'gsi-1' }, owner: { S: 'ada' } } }));
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'byOwner',
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': { S: 'ada' } },
      }),
    );
    expect(Items).toEqual([{ pk: { S: 'gsi-1' }, owner: { S: 'ada' } }]);
  });

  it('puts writes on the stream with old and new images', async () => {
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'stream-1' }, owner: { S: 'grace' } } }));
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: 'stream-1' } },
        UpdateExpression: 'SET #owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': { S: 'linus' } },
      }),
    );

    const records = (await readStream(endpoint, streamArn)).filter((record) => record.dynamodb.Keys.pk?.S === 'stream-1');
    expect(records.map(({ eventName, dynamodb }) => ({ eventName, old: dynamodb.OldImage, new: dynamodb.NewImage }))).toEqual([
      { eventName: 'INSERT', old: undefined, new: { pk: { S: 'stream-1' }, owner: { S: 'grace' } } },
      { eventName: 'MODIFY', old: { pk: { S: 'stream-1' }, owner: { S: 'grace' } }, new: { pk: { S: 'stream-1' }, owner: { S: 'linus' } } },
    ]);
    expect(records.every((record) => record.dynamodb.StreamViewType === 'NEW_AND_OLD_IMAGES')).toBe(true);
  });
});

/** Every address of this machine that is not loopback: where another machine on the network would connect. */
function networkAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((info) => (info && !info.internal ? [info.address] : []));
}

/** Whether a TCP connection to host:port is accepted (false on refusal, unreachable or no answer within the guard). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(5_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

describe('DynamoDB Local as the project starts it', () => {
  it.runIf(inject('dynamodbStartedByRun'))('accepts connections on 127.0.0.1 and on no other address of the machine', async () => {
    const port = Number(new URL(inject('dynamodbEndpoint')).port);
    const others = networkAddresses();
    expect(await accepts('127.0.0.1', port)).toBe(true);
    // A machine with no network interface has nothing else to bind: the check above is then the whole claim.
    for (const address of others) expect(await accepts(address, port), address).toBe(false);
  });

  describe('the pinned checksums', () => {
    let cacheDir: string;
    beforeEach(async () => {
      cacheDir = await mkdtemp(join(tmpdir(), 'dynamodb-local-pin-'));
    });
    afterEach(async () => {
      await rm(cacheDir, { recursive: true, force: true });
    });

    it('refuses to run a cached jar whose SHA-256 is not the pinned one, with a sentence saying what to do', async () => {
      const emulatorDir = join(cacheDir, DYNAMODB_LOCAL.package.replace('@', '-'));
      await mkdir(join(emulatorDir, 'DynamoDBLocal_lib'), { recursive: true });
      await writeFile(join(emulatorDir, 'DynamoDBLocal.jar'), 'not the jar AWS built');

      const failure = startDynamoDbLocal({ cacheDir });
      await expect(failure).rejects.toThrow(
        /DynamoDB Local's files in .* do not match their pinned SHA-256 .* so it was not run: delete .* to fetch it again\./,
      );
    });

    it('refuses a library changed, added or removed after the pin, though the jar is unchanged', async () => {
      const emulatorDir = join(cacheDir, DYNAMODB_LOCAL.package.replace('@', '-'));
      const jar = { jarPath: join(emulatorDir, 'DynamoDBLocal.jar'), libDir: join(emulatorDir, 'DynamoDBLocal_lib') };
      await mkdir(join(jar.libDir, 'native'), { recursive: true });
      await writeFile(jar.jarPath, 'the jar');
      await writeFile(join(jar.libDir, 'jetty-server.jar'), 'a library');
      await writeFile(join(jar.libDir, 'native', 'libsqlite4java.so'), 'a native library');
      const pin = { ...DYNAMODB_LOCAL, filesSha256: await filesManifestSha256(jar) };
      await expect(ensureDynamoDbLocalJar({ cacheDir, pin })).resolves.toEqual(jar);

      await writeFile(join(jar.libDir, 'native', 'libsqlite4java.so'), 'a native library, patched');
      await expect(ensureDynamoDbLocalJar({ cacheDir, pin })).rejects.toThrow('do not match their pinned SHA-256');
      await writeFile(join(jar.libDir, 'native', 'libsqlite4java.so'), 'a native library');
      await writeFile(join(jar.libDir, 'log4j-extra.jar'), 'a library added to the class path');
      await expect(ensureDynamoDbLocalJar({ cacheDir, pin })).rejects.toThrow('do not match their pinned SHA-256');
      await rm(join(jar.libDir, 'log4j-extra.jar'));
      await rm(join(jar.libDir, 'jetty-server.jar'));
      await expect(ensureDynamoDbLocalJar({ cacheDir, pin })).rejects.toThrow('do not match their pinned SHA-256');
    });

    it('unpacks nothing of a package whose tarball does not match the pinned integrity, after saying what it fetched and showing its progress', async () => {
      const pin = { ...DYNAMODB_LOCAL, tarballSha512: createHash('sha512').update('another package').digest('base64') };
      const started: string[] = [];
      const notes: string[] = [];
      const progress: { received: number; total: number | undefined }[] = [];
      const onFetch = {
        start: (what: string) => started.push(what),
        progress: (received: number, total: number | undefined) => progress.push({ received, total }),
        note: (line: string) => notes.push(line),
      };

      await expect(ensureDynamoDbLocalJar({ cacheDir, pin, onFetch })).rejects.toThrow(
        `The npm package ${DYNAMODB_LOCAL.package} does not match its pinned checksum`,
      );
      expect(await readdir(cacheDir)).toEqual([]);
      expect(started).toEqual([expect.stringMatching(new RegExp(`npm package ${DYNAMODB_LOCAL.package}, about 55 MB\\) from the npm registry`))]);
      expect(notes).toEqual([]);
      const last = progress.at(-1);
      expect(progress.length).toBeGreaterThan(10);
      expect(last?.received).toBe(last?.total);
      expect(last?.total).toBeGreaterThan(50 * 1024 * 1024);
    });
  });

  describe('finding Java', () => {
    let fakeBin: string;
    beforeEach(async () => {
      fakeBin = await mkdtemp(join(tmpdir(), 'fake-java-'));
    });
    afterEach(async () => {
      await rm(fakeBin, { recursive: true, force: true });
    });

    /** A `java` on PATH that lists the given modules, as `java --list-modules` does. */
    async function fakeJava(modules: string[]): Promise<void> {
      const script = join(fakeBin, 'java');
      await writeFile(script, `#!/bin/sh\nprintf '%s\\n' ${modules.map((module) => `'${module}'`).join(' ')}\n`);
      await chmod(script, 0o755);
    }

    it.runIf(process.platform !== 'win32')('takes a java whose modules include the compiler', async () => {
      await fakeJava(['java.base@17.0.15', 'jdk.compiler@17.0.15']);
      expect(await findJava({ PATH: fakeBin })).toBe('java');
    });

    it.runIf(process.platform !== 'win32')('prefers JAVA_HOME over PATH', async () => {
      await mkdir(join(fakeBin, 'home', 'bin'), { recursive: true });
      const homeJava = join(fakeBin, 'home', 'bin', 'java');
      await writeFile(homeJava, "#!/bin/sh\necho 'jdk.compiler@21'\n");
      await chmod(homeJava, 0o755);
      expect(await findJava({ PATH: '/nonexistent', JAVA_HOME: join(fakeBin, 'home') })).toBe(homeJava);
    });

    it.runIf(process.platform !== 'win32')('says a runtime without the compiler is not enough, and what to install on each platform', async () => {
      await fakeJava(['java.base@17.0.15']);
      await expect(findJava({ PATH: fakeBin }, 'linux')).rejects.toThrow(
        /needs a Java development kit \(JDK\) 17 or newer, and java is a runtime without its compiler.*apt-get install -y default-jdk-headless\.$/,
      );
      await expect(findJava({ PATH: fakeBin }, 'darwin')).rejects.toThrow(/brew install openjdk@17/);
    });

    it('says where to get Java when there is none', async () => {
      await expect(findJava({ PATH: fakeBin }, 'win32')).rejects.toThrow(/no java was found on PATH or in JAVA_HOME: winget install Microsoft\.OpenJDK\.17/);
    });
  });
});
