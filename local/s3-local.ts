import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { localS3Config } from '#adapters/script-store';
import { UPLOAD_CORS } from '#lib/front-door-rules';

/** The local stack's scripts bucket; any name S3 allows (3 to 63 characters) would do. */
const LOCAL_SCRIPT_BUCKET = 'script-distribution-local-scripts';

export interface LocalS3 {
  endpoint: string;
  bucketName: string;
  /** The bucket's CORS rule as the CDK stack's (UPLOAD_CORS), for these console origins: a browser PUT from them passes. */
  allowUploadsFrom(origins: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server (s3rver) on 127.0.0.1 and a free port, behind the same S3 code the stack deploys. Its
 * objects live in `dataDir` (kept across restarts, `--persist`) or in a temporary folder removed at stop. It logs
 * nothing: its request log would name object keys, and nothing of a script may reach a log.
 */
export async function startLocalS3(options: { dataDir?: string } = {}): Promise<LocalS3> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const directory = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'sdapi-s3-')));
  const removeDirectory = options.dataDir ? async () => undefined : () => rm(directory, { recursive: true, force: true });
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  let endpoint: string;
  try {
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    const client = new S3Client(localS3Config(endpoint));
    try {
      await client.send(new CreateBucketCommand({ Bucket: LOCAL_SCRIPT_BUCKET }));
    } catch (error) {
      // A persisted folder already holds the bucket.
      if (!(error instanceof Error && (error.name === 'BucketAlreadyOwnedByYou' || error.name === 'BucketAlreadyExists'))) throw error;
    } finally {
      client.destroy();
    }
  } catch (error) {
    await server.close().catch(() => undefined);
    await removeDirectory();
    throw error;
  }
  return {
    endpoint,
    bucketName: LOCAL_SCRIPT_BUCKET,
    async allowUploadsFrom(origins) {
      const client = new S3Client(localS3Config(endpoint));
      try {
        const { allowedMethods, allowedHeaders, maxAgeSeconds } = UPLOAD_CORS;
        const rule = { AllowedMethods: [...allowedMethods], AllowedHeaders: [...allowedHeaders], AllowedOrigins: [...origins], MaxAgeSeconds: maxAgeSeconds };
        await client.send(new PutBucketCorsCommand({ Bucket: LOCAL_SCRIPT_BUCKET, CORSConfiguration: { CORSRules: [rule] } }));
      } finally {
        client.destroy();
      }
    },
    stop: async () => {
      await server.close();
      await removeDirectory();
    },
  };
}
