import type { Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { expect } from 'vitest';
import type { AnyRoute } from '#http/routes';
import { DeveloperApiStack } from '#lib/developer-api-stack';
import { type CfnResource, type GetAtt, type Statement, templateOnlyApp } from './cdk';

/** Console files as `buildConsole` writes them, for a synth that reads the template only (the console is built and tested on its own). */
export const TEST_CONSOLE_FILES = () => s3deploy.Source.data('index.html', '<!doctype html><title>Console</title><script type="module" src="app.js"></script>');

/**
 * The template tests' view of the whole stack: synthesized without esbuild, with `context` as `-c` would give it,
 * in `env` when given (as `cdk` gives it from the profile).
 */
export function synthesizeApiStack(context: Record<string, unknown> = {}, env?: Environment) {
  const app = templateOnlyApp(context);
  const stack = new DeveloperApiStack(app, 'DeveloperApiTest', { consoleFiles: TEST_CONSOLE_FILES(), ...(env ? { env } : {}) });
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Record<string, CfnResource> };
}

type Ref = { Ref: string };

/** The logical id prefixes of CDK's own deployment-time functions, singletons at the stack's root: the BucketDeployment handler and the console bucket's emptier. */
const CDK_DEPLOYMENT_HANDLERS = ['CustomCDKBucketDeployment', 'CustomS3AutoDeleteObjects'];

export const actionsOf = (statement: Statement) => [statement.Action].flat();

/**
 * Lookups in a synthesized template, by what the stack means rather than by logical id. `resources` is read at each
 * call, so the template may be synthesized in a `beforeAll`.
 */
export function templateLookups(resources: () => Record<string, CfnResource>) {
  const ofType = (type: string) => Object.entries(resources()).filter(([, resource]) => resource.Type === type);
  /** The stack's own functions: every AWS::Lambda::Function but CDK's deployment-time ones (the console's files, at deployment and deletion). */
  const serviceFunctions = () => ofType('AWS::Lambda::Function').filter(([id]) => !CDK_DEPLOYMENT_HANDLERS.some((prefix) => id.startsWith(prefix)));

  function only(type: string): [string, CfnResource] {
    const found = ofType(type);
    expect(found).toHaveLength(1);
    return found[0] as [string, CfnResource];
  }

  /** `/v1/projects/{id}/keys` of an AWS::ApiGateway::Resource, walking its parents up to the API root. */
  function resourcePath(resourceId: string): string {
    const resource = resources()[resourceId];
    if (!resource) throw new Error(`No resource ${resourceId}`);
    const parent = resource.Properties.ParentId as Ref | GetAtt;
    const parentPath = 'Ref' in parent ? resourcePath(parent.Ref) : '';
    return `${parentPath}/${String(resource.Properties.PathPart)}`;
  }

  function methodOf(route: Pick<AnyRoute, 'method' | 'path'>): CfnResource {
    const methods = ofType('AWS::ApiGateway::Method')
      .map(([, method]) => method)
      .filter((method) => method.Properties.HttpMethod === route.method && resourcePath((method.Properties.ResourceId as Ref).Ref) === route.path);
    expect(methods, `${route.method} ${route.path}`).toHaveLength(1);
    return methods[0] as CfnResource;
  }

  /** Logical id of the one function of the stack that `referrer` (an integration, an authorizer URI) names. */
  function functionNamedIn(referrer: unknown, what: string): string {
    const text = JSON.stringify(referrer);
    const ids = ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => text.includes(`"${id}"`));
    expect(ids, what).toHaveLength(1);
    return ids[0] as string;
  }

  /** Logical id of the Lambda function a method's proxy integration invokes. */
  const functionIdOf = (route: Pick<AnyRoute, 'method' | 'path'>) =>
    functionNamedIn(methodOf(route).Properties.Integration, `function behind ${route.method} ${route.path}`);
  const authorizerFunctionId = () => functionNamedIn(only('AWS::ApiGateway::Authorizer')[1].Properties.AuthorizerUri, 'function of the authorizer');

  /** Every statement of the inline policies on a function's execution role. */
  function statementsOf(functionId: string): Statement[] {
    const roleId = (resources()[functionId]!.Properties.Role as GetAtt)['Fn::GetAtt'][0];
    return ofType('AWS::IAM::Policy')
      .filter(([, policy]) => (policy.Properties.Roles as Ref[]).some((role) => role.Ref === roleId))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }

  const dynamoStatements = (functionId: string) =>
    statementsOf(functionId).filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')));

  return { ofType, serviceFunctions, only, resourcePath, methodOf, functionIdOf, authorizerFunctionId, statementsOf, dynamoStatements };
}
