import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { presigningS3Client, S3UploadStaging } from '#adapters/upload-staging';
import type { PendingUpload } from '#domain/ports';

/**
 * The console's presigned upload URL (issue 38, finding 6): the SDK's default checksum (CRC32 of the body, "Data
 * Integrity Protections for Amazon S3", https://docs.aws.amazon.com/sdkref/latest/guide/feature-dataintegrity.html)
 * of a PutObject signed without its body is the empty body's, which S3 then holds the real file to
 * (https://github.com/aws/aws-sdk-js-v3/issues/6994).
 */

const UPLOAD: PendingUpload = { uploadId: 'up-1', projectId: 'proj-1', sizeBytes: 12, sha256: 'a'.repeat(64), notes: '', createdAt: 0 };
const CONFIG = { region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } };

describe('S3UploadStaging.presign', () => {
  it('signs no checksum into the URL when made with presigningS3Client (the body is not known when signing)', async () => {
    const { url } = await new S3UploadStaging(presigningS3Client(CONFIG), 'scripts-bucket').presign(UPLOAD);
    const query = new URL(url).searchParams;
    expect([...query.keys()].filter((name) => name.toLowerCase().startsWith('x-amz-checksum') || name === 'x-amz-sdk-checksum-algorithm')).toEqual([]);
    // Content-Length is signed on purpose (issue 39): S3 refuses a body of another size than announced.
    expect(query.get('X-Amz-SignedHeaders')).toBe('content-length;host');
  });

  it("would sign the empty body's CRC32 with the SDK's default client: why the presigning client exists", async () => {
    const { url } = await new S3UploadStaging(new S3Client(CONFIG), 'scripts-bucket').presign(UPLOAD);
    expect(new URL(url).searchParams.get('x-amz-checksum-crc32')).toBe('AAAAAA==');
  });

  it("names the bucket's regional endpoint, the origin the console's CSP allows", async () => {
    const { url, headers } = await new S3UploadStaging(presigningS3Client(CONFIG), 'scripts-bucket').presign(UPLOAD);
    expect(new URL(url).origin).toBe('https://scripts-bucket.s3.eu-west-1.amazonaws.com');
    expect(Object.keys(headers)).toEqual(['Content-Type']);
  });
});
