import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { ScriptObject, ScriptStore } from '#domain/ports';
import { scriptObjectKey } from './layout';
import { isMissingObject } from './s3-missing-object';

/**
 * How to reach the local stack's S3 (s3rver): it accepts any credentials and region, and names buckets in the
 * path, not the host. In AWS the client takes credentials and region from the Lambda runtime instead.
 */
export function localS3Config(endpoint: string): S3ClientConfig {
  return { endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } };
}

/** Version scripts as objects of one bucket, keyed as layout.ts says. */
export class S3ScriptStore implements ScriptStore {
  constructor(
    private readonly s3: S3Client,
    readonly bucketName: string,
  ) {}

  async put(object: ScriptObject, body: Uint8Array): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: scriptObjectKey(object),
        Body: body,
        ContentType: 'text/plain; charset=utf-8',
        ContentLength: body.length,
      }),
    );
  }

  async get(object: ScriptObject): Promise<Uint8Array | undefined> {
    try {
      const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucketName, Key: scriptObjectKey(object) }));
      return Body ? await Body.transformToByteArray() : undefined;
    } catch (error) {
      if (isMissingObject(error)) return undefined;
      throw error;
    }
  }

  async delete(object: ScriptObject): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: scriptObjectKey(object) }));
  }
}

export const createS3Client = (config: S3ClientConfig = {}): S3Client => new S3Client(config);
