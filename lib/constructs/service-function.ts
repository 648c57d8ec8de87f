import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** Root of the Lambda sources; every function's entry is a file under it. */
const LAMBDAS_DIR = fileURLToPath(new URL('../../lambdas/', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

/**
 * Every function's esbuild settings: minified ESM for Node 22 with source maps, the AWS SDK left to the runtime
 * (it ships v3, which keeps bundles small). The benchmark bundles with this same object.
 */
export const SERVICE_BUNDLING = {
  format: OutputFormat.ESM,
  minify: true,
  sourceMap: true,
  target: 'node22',
  externalModules: ['@aws-sdk/*'],
  // The hosted stub loader (examples/roblox-loader.luau) is bundled into the loader's function as text.
  loader: { '.luau': 'text' as const },
  // ESM bundles that pull in CommonJS dependencies need `require` defined.
  banner: "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);",
} satisfies BundlingOptions;

/** The environment every function starts with. */
export const SERVICE_ENVIRONMENT = { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_LOG_LEVEL: 'INFO' } as const;

export interface ServiceFunctionProps extends Omit<NodejsFunctionProps, 'entry' | 'runtime' | 'architecture'> {
  /** Path of the handler module relative to `lambdas/`, e.g. `functions/list-keys.ts`. */
  entry: string;
  /**
   * How the function is invoked, which says where a failed invocation goes instead of a function DLQ (a DLQ holds
   * only asynchronous invocations' events): `synchronous` (API Gateway, a function URL, the authorizer, a direct
   * invoke that reads its answer: the caller gets the error), `event source` (a queue or stream mapping keeps its failures), `schedule` (EventBridge).
   */
  invokedBy?: 'synchronous' | 'event source' | 'schedule';
}

const RUNTIME_REASON =
  'Node.js 22 is the runtime the project targets (bundles target node22; the local stack and tests run on Node 22). Moving to a newer runtime is one line in ServiceFunction.';

/** cdk-nag Serverless-LambdaDLQ's reason for each way a function is invoked. */
const NO_FUNCTION_DLQ = {
  synchronous:
    'Invoked synchronously (API Gateway, a function URL, the authorizer, or a direct invoke that reads its answer): the caller gets the failure; a function DLQ holds only asynchronous events.',
  'event source':
    "Invoked by an event source mapping, which keeps its own failures (the queue's redrive to its DLQ, or the stream mapping's on-failure queue); a function DLQ holds only asynchronous events.",
  schedule:
    "Invoked by an EventBridge schedule, whose event carries only the time: EventBridge retries the run (4 attempts within 6 hours) and an alarm watches the rule's failed invocations; a held event would replay nothing.",
} as const;

/**
 * Every function of the service with the same defaults in one place: Node 22 on ARM64, SERVICE_BUNDLING,
 * X-Ray tracing (unless turned off, as the loader check's is) and a log group with a retention instead of logs kept forever. The cdk-nag findings these
 * defaults raise are acknowledged here, on each function only, so the same finding elsewhere still fails synth.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { entry, environment, bundling, tracing = lambda.Tracing.ACTIVE, invokedBy = 'synchronous', ...rest } = props;
    super(scope, id, {
      memorySize: 512,
      timeout: Duration.seconds(10),
      tracing,
      ...rest,
      entry: `${LAMBDAS_DIR}${entry}`,
      depsLockFilePath: LOCK_FILE,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      logGroup: new logs.LogGroup(scope, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
      environment: { ...SERVICE_ENVIRONMENT, ...environment },
      bundling: { ...SERVICE_BUNDLING, ...bundling },
    });
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The basic execution role only allows creating log streams and putting log events; the function writes to its own log group.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: RUNTIME_REASON,
      },
      { id: 'Serverless-LambdaLatestVersion', reason: RUNTIME_REASON },
      { id: 'Serverless-LambdaDLQ', reason: NO_FUNCTION_DLQ[invokedBy] },
    );
    if (tracing === lambda.Tracing.ACTIVE) {
      Validations.of(this).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions, so their resource is "*".',
      });
    }
  }
}
