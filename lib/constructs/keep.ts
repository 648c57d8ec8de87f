import { RemovalPolicy } from 'aws-cdk-lib';

/**
 * Every stateful resource's policy (table, buckets, key secret, access-log groups): kept when the stack is deleted
 * or the resource removed or replaced, but deleted when the create that made it rolls back, so a failed first deploy
 * leaves nothing to delete by hand and its retry makes no duplicates. CloudFormation's `RetainExceptOnCreate`
 * ("DeletionPolicy attribute", https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html),
 * with UpdateReplacePolicy Retain.
 */
export const KEEP_UNLESS_JUST_CREATED = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
