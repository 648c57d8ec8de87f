import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client, localS3Config, S3ScriptStore } from '#adapters/script-store';
import { newId } from '#domain/ids';
import type { ScriptObject, ScriptStore } from '#domain/ports';
import { startLocalS3 } from '#local/s3-local';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * ScriptStore (lambdas/domain/ports.ts): MemoryScriptStore and S3ScriptStore, one contract. The S3 store runs on
 * an s3rver of this file's own (startLocalS3, the local stack's), not on the run's DynamoDB Local, so its subjects
 * are listed here rather than in subjects.ts. Every test puts objects of its own project, so none sees another's.
 *
 * UploadStaging and UploadStore have no shared fake to hold to their real implementations (S3UploadStaging,
 * DynamoConsoleStore), so they have no contract here.
 */

interface Implementation {
  name: string;
  open(): Promise<{ store: ScriptStore; close(): Promise<void> }>;
}

const implementations: Implementation[] = [
  { name: 'in memory (test/support)', open: async () => ({ store: new MemoryScriptStore(), close: async () => undefined }) },
  {
    name: 'on s3rver (lambdas/adapters)',
    open: async () => {
      const s3 = await startLocalS3();
      const client = createS3Client(localS3Config(s3.endpoint));
      return {
        store: new S3ScriptStore(client, s3.bucketName),
        close: async () => {
          client.destroy();
          await s3.stop();
        },
      };
    },
  },
  {
    // AWS answers a missing key with 403 AccessDenied to a reader without s3:ListBucket, as every role of the stack
    // is ("GetObject", https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, Permissions); s3rver
    // answers 404 to everyone, so this client's HTTP handler turns s3rver's 404 into the 403 AWS sends.
    name: 'on s3rver answering a missing object as AWS does without s3:ListBucket (403 AccessDenied)',
    open: async () => {
      const s3 = await startLocalS3();
      const plain = createS3Client(localS3Config(s3.endpoint));
      const http = plain.config.requestHandler as RequestHandler;
      const client = createS3Client({
        ...localS3Config(s3.endpoint),
        requestHandler: {
          handle: async (request: { method: string }, options?: unknown) => {
            const answer = await http.handle(request, options);
            if (answer.response.statusCode !== 404 || request.method !== 'GET') return answer;
            const denied = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
            return { response: { statusCode: 403, headers: { 'content-type': 'application/xml' }, body: Readable.from([Buffer.from(denied)]) } };
          },
        },
      });
      return {
        store: new S3ScriptStore(client, s3.bucketName),
        close: async () => {
          client.destroy();
          plain.destroy();
          await s3.stop();
        },
      };
    },
  },
];

/** The SDK's HTTP handler, as much of it as the 403 stand-in above calls. */
interface RequestHandler {
  handle(request: unknown, options?: unknown): Promise<{ response: { statusCode: number } }>;
}

const encode = (text: string) => new TextEncoder().encode(text);
const newObject = (projectId = newId('prj')): ScriptObject => ({ projectId, versionId: newId('ver') });
const SCRIPT = 'print("hello from WM_XXXXXXXXXXXXXXXX")\n';

describe.each(implementations)('$name', ({ open }) => {
  let opened: Awaited<ReturnType<Implementation['open']>> | undefined;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened?.close();
  });
  const store = () => {
    if (!opened) throw new Error('the implementation is not open yet');
    return opened.store;
  };

  it('gets the bytes a put stored', async () => {
    const object = newObject();
    await store().put(object, encode(SCRIPT));
    expect(await store().get(object)).toEqual(encode(SCRIPT));
  });

  it('gets nothing for an object never put', async () => {
    expect(await store().get(newObject())).toBeUndefined();
  });

  it('keeps any bytes as they are, not only text', async () => {
    const object = newObject();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => 255 - i);
    await store().put(object, bytes);
    expect(await store().get(object)).toEqual(Uint8Array.from({ length: 256 }, (_, i) => 255 - i));
  });

  it('replaces the bytes of an object put again', async () => {
    const object = newObject();
    await store().put(object, encode(SCRIPT));
    await store().put(object, encode('print("replaced")'));
    expect(await store().get(object)).toEqual(encode('print("replaced")'));
  });

  it('gets nothing once the object is deleted', async () => {
    const object = newObject();
    await store().put(object, encode(SCRIPT));
    await store().delete(object);
    expect(await store().get(object)).toBeUndefined();
  });

  it('deletes an object never put without failing', async () => {
    const object = newObject();
    await expect(store().delete(object)).resolves.toBeUndefined();
    expect(await store().get(object)).toBeUndefined();
  });

  it('tells objects apart by project and by version', async () => {
    const object = newObject();
    const sameVersionElsewhere = { projectId: newId('prj'), versionId: object.versionId };
    const otherVersion = newObject(object.projectId);
    await store().put(object, encode('print("one")'));
    await store().put(sameVersionElsewhere, encode('print("two")'));
    await store().put(otherVersion, encode('print("three")'));
    await store().delete(object);
    expect(await store().get(object)).toBeUndefined();
    expect(await store().get(sameVersionElsewhere)).toEqual(encode('print("two")'));
    expect(await store().get(otherVersion)).toEqual(encode('print("three")'));
  });

  it('keeps the bytes as they were put, whatever the caller does with its buffer afterwards', async () => {
    const object = newObject();
    const body = encode(SCRIPT);
    await store().put(object, body);
    body.fill(0);
    expect(await store().get(object)).toEqual(encode(SCRIPT));
  });

  it('answers a copy of the stored bytes: changing what a get answered changes no later get', async () => {
    const object = newObject();
    await store().put(object, encode(SCRIPT));
    (await store().get(object))?.fill(0);
    expect(await store().get(object)).toEqual(encode(SCRIPT));
  });
});
