import { Validations } from 'aws-cdk-lib';
import type { ServiceFunction } from './api-function';

/**
 * cdk-nag AwsSolutions findings that every ServiceFunction raises because of its defaults, acknowledged on the
 * function only (never stack-wide), so the same finding on any other resource still fails the synth.
 */
export function acknowledgeServiceFunctionDefaults(fn: ServiceFunction): void {
  Validations.of(fn).acknowledge(
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'The basic execution role only allows creating log streams and putting log events; the function writes to its own log group.',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions, so their resource is "*".',
    },
    {
      id: 'AwsSolutions-L1',
      reason: 'Node.js 22 is the runtime the project targets (bundles target node22; the local stack and tests run on Node 22). Moving to a newer runtime is one line in ServiceFunction.',
    },
  );
}
