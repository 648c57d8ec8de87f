import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { InvalidInput } from '#domain/errors';
import type { PendingUpload, UploadStaging } from '#domain/ports';
import { uploadObjectKey } from './layout';
import { isMissingObject } from './s3-missing-object';

/** How long a presigned upload URL works: long enough for 5 MiB on a slow line, short enough to be useless later. */
const UPLOAD_URL_SECONDS = 15 * 60;

/**
 * The client a presigned upload URL is signed with. By default the SDK adds a CRC32 of the request body to every
 * PutObject, and a presigned one has no body yet: the URL would carry the empty body's checksum
 * (`x-amz-checksum-crc32=AAAAAA==`) and S3 would refuse the real file as a checksum mismatch. Checksums only where an
 * operation requires one (https://github.com/aws/aws-sdk-js-v3/issues/6994; "Data integrity protections for Amazon
 * S3", https://docs.aws.amazon.com/sdkref/latest/guide/feature-dataintegrity.html).
 */
export const presigningS3Client = (config: S3ClientConfig = {}): S3Client => new S3Client({ ...config, requestChecksumCalculation: 'WHEN_REQUIRED' });

/**
 * Console uploads staged in the scripts bucket under `uploads/` (layout.ts uploadObjectKey): the browser PUTs the
 * file straight to S3 with a presigned URL, so a 5 MiB script never passes through a Lambda's 6 MB request limit.
 * The commit reads it back, checks it and deletes it; the bucket's lifecycle rule removes what no commit reached.
 */
export class S3UploadStaging implements UploadStaging {
  /** `s3` signs the upload URLs too: make it with presigningS3Client. */
  constructor(
    protected readonly s3: S3Client,
    readonly bucketName: string,
  ) {}

  async presign(upload: PendingUpload): Promise<{ url: string; headers: Record<string, string> }> {
    // The signature covers Content-Length (issue 39): S3 refuses a body of any other size than the one announced.
    const put = new PutObjectCommand({
      Bucket: this.bucketName,
      Key: uploadObjectKey(upload),
      ContentType: 'application/octet-stream',
      ContentLength: upload.sizeBytes,
    });
    const url = await getSignedUrl(this.s3, put, { expiresIn: UPLOAD_URL_SECONDS });
    return { url, headers: { 'Content-Type': 'application/octet-stream' } };
  }

  /**
   * HeadObject first (issue 39): an object of another size than announced is refused before a byte of it is read.
   * What is read is still checked whole by the commit (size, UTF-8, SHA-256), so a put after the check gains nothing.
   */
  async read(upload: Pick<PendingUpload, 'projectId' | 'uploadId' | 'sizeBytes'>): Promise<Uint8Array | undefined> {
    const object = { Bucket: this.bucketName, Key: uploadObjectKey(upload) };
    try {
      const head = await this.s3.send(new HeadObjectCommand(object));
      if (head.ContentLength !== upload.sizeBytes) throw new InvalidInput(`The file is ${head.ContentLength} bytes, not the ${upload.sizeBytes} announced`);
      const { Body } = await this.s3.send(new GetObjectCommand(object));
      return Body ? await Body.transformToByteArray() : undefined;
    } catch (error) {
      if (isMissingObject(error)) return undefined;
      throw error;
    }
  }

  async discard(upload: Pick<PendingUpload, 'projectId' | 'uploadId'>): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: uploadObjectKey(upload) }));
  }
}
