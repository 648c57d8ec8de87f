import { readFileSync } from 'node:fs';
import { App, type Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

/** A resource of a synthesized template, as the template tests read it. */
export interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface Statement {
  Action: string | string[];
  Effect: string;
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
}

export type GetAtt = { 'Fn::GetAtt': [string, string] };

/**
 * An app as `cdk synth` builds it (cdk.json's feature flags, plus `extraContext` as `-c name=value` would give it)
 * with esbuild skipped: template tests read the template only.
 */
export function templateOnlyApp(extraContext: Record<string, unknown> = {}): App {
  const { context } = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
  return new App({ context: { ...context, ...extraContext, 'aws:cdk:bundling-stacks': [] } });
}

/** A streamed table for a construct under test to attach to, shaped like the stack's. */
export function streamedTestTable(stack: Stack): dynamodb.TableV2 {
  return new dynamodb.TableV2(stack, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    dynamoStream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  });
}
