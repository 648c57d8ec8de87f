import { createHash, createHmac } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadObjectKey } from '#adapters/layout';
import { localS3Config } from '#adapters/script-store';
import { presigningS3Client, S3UploadStaging } from '#adapters/upload-staging';
import { InvalidInput } from '#domain/errors';
import { newId } from '#domain/ids';
import type { PendingUpload } from '#domain/ports';
import { type LocalS3, startLocalS3 } from '#local/s3-local';

/**
 * The console's upload staging in S3 (issue 39, item 7), on s3rver: the presigned PUT signs the announced
 * Content-Length, and the commit's read checks the object's size with HeadObject before reading any of it. s3rver
 * does not verify signatures, so the first is pinned by computing SigV4 as S3 does (AWS's "Authenticating requests:
 * using query parameters") for the size announced and for another.
 */

const CREDENTIALS = localS3Config('').credentials as { accessKeyId: string; secretAccessKey: string };

let s3: LocalS3;
let client: S3Client;
/** Commands the staging sent, by name, since the last reset. */
let sent: string[] = [];

beforeAll(async () => {
  s3 = await startLocalS3();
  // The client the console signs upload URLs with (lambdas/functions/console-api.ts).
  client = presigningS3Client(localS3Config(s3.endpoint));
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  client.send = (async (command: { constructor: { name: string } }) => {
    sent.push(command.constructor.name);
    return send(command);
  }) as typeof client.send;
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await s3?.stop();
});

const staging = () => new S3UploadStaging(client, s3.bucketName);
const pending = (sizeBytes: number): PendingUpload => ({
  uploadId: newId('aud'),
  projectId: newId('prj'),
  sizeBytes,
  sha256: '0'.repeat(64),
  notes: '',
  createdAt: 1_800_000_000,
});
const put = (upload: PendingUpload, body: string) => client.send(new PutObjectCommand({ Bucket: s3.bucketName, Key: uploadObjectKey(upload), Body: body }));

/** S3's check of a presigned URL: the SigV4 signature of the request as sent, here with `contentLength` as its Content-Length. */
function signatureAsSent(presigned: URL, contentLength: number): string {
  const query = [...presigned.searchParams.entries()]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [encode(name), encode(value)])
    .sort(([a = ''], [b = '']) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const signedHeaders = presigned.searchParams.get('X-Amz-SignedHeaders') ?? '';
  const values: Record<string, string> = { 'content-length': String(contentLength), host: presigned.host };
  const headers = signedHeaders
    .split(';')
    .map((name) => `${name}:${values[name]}\n`)
    .join('');
  const canonical = ['PUT', presigned.pathname, query, headers, signedHeaders, 'UNSIGNED-PAYLOAD'].join('\n');
  const [, date = '', region = '', service = ''] = (presigned.searchParams.get('X-Amz-Credential') ?? '').split('/');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', presigned.searchParams.get('X-Amz-Date'), scope, sha256(canonical)].join('\n');
  const key = [date, region, service, 'aws4_request'].reduce<Buffer>(
    (secret, part) => createHmac('sha256', secret).update(part).digest(),
    Buffer.from(`AWS4${CREDENTIALS.secretAccessKey}`),
  );
  return createHmac('sha256', key).update(toSign).digest('hex');
}
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the presigned upload URL', () => {
  it('signs the announced Content-Length: the signature holds for that size and for no other', async () => {
    const upload = pending(48_213);
    const { url } = await staging().presign(upload);
    const presigned = new URL(url);
    expect(presigned.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-length');
    const signature = presigned.searchParams.get('X-Amz-Signature');
    expect(signatureAsSent(presigned, upload.sizeBytes)).toBe(signature);
    for (const other of [upload.sizeBytes - 1, upload.sizeBytes + 1, 5 * 1024 * 1024]) expect(signatureAsSent(presigned, other)).not.toBe(signature);
  });
});

describe("the commit's read of the staged file", () => {
  it('reads a file of the announced size, checking its size first', async () => {
    const upload = pending(5);
    await put(upload, 'print');
    sent = [];
    expect(new TextDecoder().decode(await staging().read(upload))).toBe('print');
    expect(sent).toEqual(['HeadObjectCommand', 'GetObjectCommand']);
  });

  it('refuses a file of another size with InvalidInput naming both sizes, reading none of it', async () => {
    const upload = pending(5);
    await put(upload, 'print("a much longer file")');
    sent = [];
    await expect(staging().read(upload)).rejects.toThrow(new InvalidInput('The file is 27 bytes, not the 5 announced'));
    expect(sent).toEqual(['HeadObjectCommand']);
  });

  it('answers nothing when no file was put', async () => {
    expect(await staging().read(pending(5))).toBeUndefined();
  });
});
