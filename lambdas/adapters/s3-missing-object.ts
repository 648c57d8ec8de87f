import { NoSuchKey, NotFound, S3ServiceException } from '@aws-sdk/client-s3';

/**
 * Whether a GetObject or HeadObject failed because the object is not there. S3 answers a missing key with 404
 * (`NoSuchKey`; HeadObject's bodyless `NotFound`) only to a caller that may `s3:ListBucket` the bucket, and with 403
 * (`AccessDenied`; HeadObject's has no body, so the SDK names it `Unknown`, in older versions after the status) to
 * one that may not ("GetObject",
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, Permissions): no role of the stack may list
 * the scripts bucket (the loader reads named scripts only), so in AWS a missing script or upload is an AccessDenied.
 * Its reader is granted GetObject on the key, so any other denial is a misconfiguration the reader reports the same
 * way it reports a missing object, not a 500 of unknown cause.
 */
export function isMissingObject(error: unknown): boolean {
  if (error instanceof NoSuchKey || error instanceof NotFound) return true;
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 403 && ['AccessDenied', 'Unknown', 'Forbidden', '403'].includes(error.name);
}
