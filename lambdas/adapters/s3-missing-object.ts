import { NoSuchKey, NotFound, S3ServiceException } from '@aws-sdk/client-s3';

/**
 * Whether a GetObject failed because the object is not there. S3 answers a missing key with 404 `NoSuchKey` only to
 * a caller that may `s3:ListBucket` the bucket, and with 403 `AccessDenied` to one that may not ("GetObject",
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, Permissions): no role of the stack may list
 * the scripts bucket (the loader reads named scripts only), so in AWS a missing script or upload is an AccessDenied.
 * Its reader is granted GetObject on the key, so any other denial is a misconfiguration the reader reports the same
 * way it reports a missing object, not a 500 of unknown cause.
 */
export function isMissingObject(error: unknown): boolean {
  return error instanceof NoSuchKey || (error instanceof S3ServiceException && error.name === 'AccessDenied' && error.$metadata.httpStatusCode === 403);
}

/**
 * Whether a HeadObject failed because the object is not there: 404 `NotFound` to a caller that may list the bucket,
 * a bare 403 to one that may not ("HeadObject", https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html:
 * "If you don't have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403 Forbidden error"). A
 * HEAD answer has no body to name its error, so any 403 reads as missing here.
 */
export function isMissingOnHead(error: unknown): boolean {
  return error instanceof NotFound || (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 403);
}
