import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { COMMANDS } from '#dashboard/commands';
import { locateDeployedTable, oneLine, openContext, readStackOutputs } from '#dashboard/context';
import { DEFAULT_STACK_NAME, EDGE_FIREWALL_REGION } from '#lib/context';
import { type ConcurrencyReading, explainPlan, readConcurrency, throttleWarning } from './concurrency-preflight';

/**
 * `npm run deploy [-- <cdk deploy flags>]`: reads the account's Lambda concurrency first and passes
 * `-c reservableConcurrency=N` so the stack reserves only what the account allows (unless the flags already set
 * it); then `cdk deploy`; then the step the deployed code relies on: `token migrate`, which gives tokens stored
 * before scopes existed their `write` scope (until then they can only read, see scopeOf). The migration goes
 * through the dashboard's command table, so it is audited like the command.
 */
export interface DeploySteps {
  /** The Region the deploy goes to (the AWS SDK's, as the CDK CLI's). */
  region(): Promise<string>;
  readConcurrency(stackName: string): Promise<ConcurrencyReading>;
  cdkDeploy(args: readonly string[]): number;
  migrateTokens(stackName: string): Promise<{ migrated: number }>;
  log(line: string): void;
}

/** The values cdk's flags give a context setting (`-c name=v`, `--context name=v`, `--context=name=v`), in order. */
function contextValues(args: readonly string[], name: string): string[] {
  const values: string[] = [];
  args.forEach((arg, i) => {
    const setting = arg.startsWith('--context=') ? arg.slice('--context='.length) : ['-c', '--context'].includes(args[i - 1] ?? '') ? arg : undefined;
    if (setting?.startsWith(`${name}=`)) values.push(setting.slice(name.length + 1));
  });
  return values;
}

/**
 * What `cdk deploy` is given: the stack by name, then the flags. With `-c waf=true` outside us-east-1 the app has two
 * stacks, and a `cdk deploy` that names none refuses ("Since this app includes more than a single stack, specify
 * which stacks to use"); named, the stack brings the stacks it depends on (the web ACL's) first, as CDK does unless
 * `--exclusively`. `--all` in the flags deploys every stack instead.
 */
export function cdkDeployArgs(stackName: string, args: readonly string[]): string[] {
  return args.includes('--all') ? [...args] : [stackName, ...args];
}

/**
 * The Regions `cdk bootstrap` must have prepared for this deploy: the stack's, and with `-c waf=true` us-east-1 too,
 * where the web ACL's stack keeps its cross-Region reference writer (a Lambda function, a file asset CDK uploads to
 * the bootstrap bucket of that Region). "Bootstrap your environment" (https://docs.aws.amazon.com/cdk/v2/guide/bootstrapping-env.html).
 */
export function regionsToBootstrap(region: string, args: readonly string[]): string[] {
  const waf = contextValues(args, 'waf').at(-1) === 'true';
  return waf && region !== EDGE_FIREWALL_REGION ? [region, EDGE_FIREWALL_REGION] : [region];
}

export async function deploy(args: readonly string[], env: NodeJS.ProcessEnv, steps: DeploySteps): Promise<number> {
  const stackName = env.STACK_NAME || DEFAULT_STACK_NAME;
  let deployArgs = args;
  if (contextValues(args, 'reservableConcurrency').length === 0) {
    let reading: ConcurrencyReading;
    try {
      reading = await steps.readConcurrency(stackName);
    } catch (error) {
      steps.log(
        `Could not read the account's Lambda concurrency (${oneLine(error)}); nothing was deployed. Allow lambda:GetAccountSettings, cloudformation:DescribeStacks and cloudformation:GetTemplate, or choose yourself: npm run deploy -- -c reservableConcurrency=0 reserves nothing.`,
      );
      return 1;
    }
    const { reservable, lines } = explainPlan(reading);
    for (const line of lines) steps.log(line);
    deployArgs = [...args, '-c', `reservableConcurrency=${reservable}`];
  }
  const region = await steps.region();
  const warning = throttleWarning(region);
  if (warning) steps.log(warning);
  const regions = regionsToBootstrap(region, deployArgs);
  steps.log(
    `Deploying stack ${stackName} to ${regions.join(' and ')}: each Region needs cdk bootstrap once (npx cdk bootstrap with the same -c settings bootstraps ${regions.length === 1 ? 'it' : 'all of them'}).`,
  );
  const status = steps.cdkDeploy(cdkDeployArgs(stackName, deployArgs));
  if (status !== 0) return status;
  try {
    const { migrated } = await steps.migrateTokens(stackName);
    steps.log(`token migrate: ${migrated} token(s) stored before scopes now carry their write scope`);
    return 0;
  } catch (error) {
    steps.log(
      `The stack is deployed, but token migrate failed (${oneLine(error)}): run it again with npm run -s dashboard -- token migrate (TABLE_NAME set to the deployed table); until then tokens stored before scopes can only read`,
    );
    return 1;
  }
}

const AWS_STEPS: DeploySteps = {
  region: () => new LambdaClient({}).config.region(),
  readConcurrency: (stackName) => readConcurrency(new LambdaClient({}), new CloudFormationClient({}), stackName),
  cdkDeploy: (args) => spawnSync('npx', ['cdk', 'deploy', ...args], { stdio: 'inherit', shell: process.platform === 'win32' }).status ?? 1,
  async migrateTokens(stackName) {
    const { context, close } = openContext(await locateDeployedTable(stackName, readStackOutputs));
    try {
      const run = COMMANDS['token migrate']?.prepare([]);
      if (!run) throw new Error('the dashboard has no token migrate command');
      return (await run(context)) as { migrated: number };
    } finally {
      close();
    }
  },
  log: (line) => console.error(line),
};

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await deploy(process.argv.slice(2), process.env, AWS_STEPS);
