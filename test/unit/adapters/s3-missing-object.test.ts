import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { S3ScriptStore } from '#adapters/script-store';
import { S3UploadStaging } from '#adapters/upload-staging';

/**
 * A missing object as S3 reports it in AWS. "GetObject" (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
 * Permissions): "If you have the s3:ListBucket permission on the bucket, Amazon S3 returns an HTTP status code 404 Not
 * Found error. If you don't have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403 Access Denied
 * error." No role of the stack may list the scripts bucket, so the 403 is what the stores meet; s3rver (the local
 * stack) answers 404 to everyone.
 */

// The instance only: the last test sends through a real client.
const mocked = new S3Client({ region: 'eu-west-1' });
const s3 = mockClient(mocked);
afterEach(() => s3.reset());

const accessDenied = () => new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'Access Denied' });
const object = { projectId: 'prj_1', versionId: 'ver_1' };
const upload = { projectId: 'prj_1', uploadId: 'upl_1', sizeBytes: 5 };

describe('a missing object in AWS, where the reader may not list the bucket', () => {
  it('is no script for the script store (403 AccessDenied as 404 NoSuchKey), not an error', async () => {
    s3.on(GetObjectCommand).rejects(accessDenied());
    expect(await new S3ScriptStore(mocked, 'scripts').get(object)).toBeUndefined();
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ $metadata: { httpStatusCode: 404 }, message: 'The specified key does not exist.' }));
    expect(await new S3ScriptStore(mocked, 'scripts').get(object)).toBeUndefined();
  });

  it('is no file for a staged upload, which the commit answers as a 400 ("No file arrived"), at its HeadObject', async () => {
    s3.on(HeadObjectCommand).rejects(new S3ServiceException({ name: '403', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'UnknownError' }));
    expect(await new S3UploadStaging(mocked, 'scripts').read(upload)).toBeUndefined();
    s3.on(HeadObjectCommand).rejects(new NotFound({ $metadata: { httpStatusCode: 404 }, message: 'NotFound' }));
    expect(await new S3UploadStaging(mocked, 'scripts').read(upload)).toBeUndefined();
  });

  it('still fails on what is not a missing object: a throttle, a 500, an AccessDenied that is no 403', async () => {
    const store = new S3ScriptStore(mocked, 'scripts');
    s3.on(GetObjectCommand).rejects(new S3ServiceException({ name: 'SlowDown', $fault: 'server', $metadata: { httpStatusCode: 503 }, message: 'Slow Down' }));
    await expect(store.get(object)).rejects.toThrow('Slow Down');
    s3.on(GetObjectCommand).rejects(
      new S3ServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'We encountered an internal error' }),
    );
    s3.on(HeadObjectCommand).rejects(
      new S3ServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'We encountered an internal error' }),
    );
    await expect(new S3UploadStaging(mocked, 'scripts').read(upload)).rejects.toThrow('internal error');
    s3.on(GetObjectCommand).rejects(new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'odd' }));
    await expect(store.get(object)).rejects.toThrow('odd');
  });
});

describe("S3's own 403 answer, parsed by the SDK as the stores run it", () => {
  it('reads as a missing object: the body S3 sends a GetObject without s3:ListBucket', async () => {
    const body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>R</RequestId><HostId>H</HostId></Error>';
    const requests: string[] = [];
    const client = new S3Client({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 1,
      requestHandler: {
        handle: async (request: { method: string; path: string }) => {
          requests.push(`${request.method} ${request.path}`);
          // An HTTP response as the SDK's handlers give one (smithy reads it by its shape).
          return { response: { statusCode: 403, headers: { 'content-type': 'application/xml' }, body: Readable.from([Buffer.from(body)]) } };
        },
      },
    });
    expect(await new S3ScriptStore(client, 'scripts').get(object)).toBeUndefined();
    expect(requests).toEqual(['GET /scripts/prj_1/ver_1.luau']);
  });

  it("reads as a missing upload: HeadObject's bodyless 403, named as the SDK names it", async () => {
    const requests: string[] = [];
    const client = new S3Client({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 1,
      requestHandler: {
        handle: async (request: { method: string; path: string }) => {
          requests.push(`${request.method} ${request.path}`);
          return { response: { statusCode: 403, headers: {}, body: Readable.from([]) } };
        },
      },
    });
    expect(await new S3UploadStaging(client, 'scripts').read(upload)).toBeUndefined();
    expect(requests).toEqual(['HEAD /uploads/prj_1/upl_1']);
  });
});
