import { CloudFormationClient, DescribeStacksCommand, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_CONCURRENCY, FUNCTIONS_PER_GROUP, RESERVED_CONCURRENCY } from '#lib/capacity';
import { CONCURRENCY_QUOTA_CODE, readConcurrency } from '../../../scripts/concurrency-preflight';
import { cdkDeployArgs, type DeploySteps, deploy, regionsToBootstrap } from '../../../scripts/deploy';

const lambda = mockClient(LambdaClient);
const cloudFormation = mockClient(CloudFormationClient);

afterEach(() => {
  lambda.reset();
  cloudFormation.reset();
});

/** What every group reserves together with the stack's routes: 899 with the 10 owner routes. */
const FULL = Object.entries(FUNCTIONS_PER_GROUP).reduce(
  (sum, [group, count]) => sum + count * RESERVED_CONCURRENCY[group as keyof typeof RESERVED_CONCURRENCY],
  0,
);

/** An account as GetAccountSettings describes it, and no stack of that name yet. */
function newAccount(quota: number, unreserved = quota) {
  lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: quota, UnreservedConcurrentExecutions: unreserved } });
  cloudFormation
    .on(DescribeStacksCommand)
    .rejects(Object.assign(new Error('Stack with id ScriptDistributionDeveloperApi does not exist'), { name: 'ValidationError' }));
}

/** `npm run deploy` with its AWS reads mocked (GetAccountSettings, DescribeStacks, GetTemplate): cdk deploy, then token migrate. */
function steps(cdkStatus: number, migrate: DeploySteps['migrateTokens'] = async () => ({ migrated: 0 }), region = 'us-east-1') {
  const done: string[] = [];
  return {
    done,
    steps: {
      region: async () => region,
      readConcurrency: (stackName) => readConcurrency(new LambdaClient({}), new CloudFormationClient({}), stackName),
      cdkDeploy: (args) => {
        done.push(`cdk deploy ${args.join(' ')}`.trim());
        return cdkStatus;
      },
      migrateTokens: async (stackName) => {
        done.push(`token migrate ${stackName}`);
        return migrate(stackName);
      },
      log: (line) => void done.push(line),
    } satisfies DeploySteps,
  };
}

const deployed = (done: string[]) => done.find((line) => line.startsWith('cdk deploy')) ?? '';

describe('npm run deploy: the concurrency preflight', () => {
  it('reserves nothing in a new account whose quota is 10, and says how to ask for the quota every reservation needs', async () => {
    newAccount(10);
    const { done, steps: run } = steps(0);
    expect(await deploy([], {}, run)).toBe(0);
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi -c reservableConcurrency=0');
    expect(done).toContain('Reserving no concurrency.');
    const ask = done.find((line) => line.includes('request-service-quota-increase')) ?? '';
    expect(ask).toContain(`--quota-code ${CONCURRENCY_QUOTA_CODE} --desired-value 1000`);
    expect(ask).toContain(`needs a quota of at least ${FULL + ACCOUNT_CONCURRENCY.unreservedMinimum}`);
  });

  it('reserves every group in an account with the default 1,000 and nothing else reserved, and asks for nothing', async () => {
    newAccount(1_000);
    const { done, steps: run } = steps(0);
    expect(await deploy(['--require-approval', 'never'], {}, run)).toBe(0);
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi --require-approval never -c reservableConcurrency=900');
    const routes = FUNCTIONS_PER_GROUP.route * RESERVED_CONCURRENCY.route;
    expect(done).toContain(
      `Reserving ${FULL}: loaderCheck 100, authorizer 100, queueIngest 20, delivery 5, fanout 10, streamIngest 10, dailyDetector 2, alertDigest 2, discord 10, shops 5, freeKeys 10, console 5, ingest 45, quietRoute ${FUNCTIONS_PER_GROUP.quietRoute * RESERVED_CONCURRENCY.quietRoute}, route ${routes}.`,
    );
    expect(done.some((line) => line.includes('request-service-quota-increase'))).toBe(false);
  });

  it('reserves the groups that fit, loader check first, where other functions of the account already reserve some', async () => {
    // 1,000 in all, 700 reserved elsewhere: 300 unreserved, 200 reservable.
    newAccount(1_000, 300);
    const { done, steps: run } = steps(0);
    await deploy([], {}, run);
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi -c reservableConcurrency=200');
    expect(done).toContain('Reserving 200: loaderCheck 100, authorizer 100.');
    expect(done.find((line) => line.startsWith('Not reserved:'))).toMatch(
      /^Not reserved: queueIngest 20, .* route \d+\. These functions share the account's pool/,
    );
    expect(done.find((line) => line.includes('needs a quota of at least'))).toContain(
      `needs a quota of at least ${700 + ACCOUNT_CONCURRENCY.unreservedMinimum + FULL}`,
    );
  });

  it("counts the reservations the stack already holds as its own on a redeploy (Lambda's unreserved figure excludes them)", async () => {
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1_000, UnreservedConcurrentExecutions: 1_000 - FULL } });
    cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'Staging', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date() }] });
    const template = {
      Resources: {
        Loader: { Type: 'AWS::Lambda::Function', Properties: { ReservedConcurrentExecutions: FULL - 10 } },
        Other: { Type: 'AWS::Lambda::Function', Properties: { ReservedConcurrentExecutions: 10 } },
        Table: { Type: 'AWS::DynamoDB::GlobalTable', Properties: {} },
      },
    };
    cloudFormation.on(GetTemplateCommand, { StackName: 'Staging' }).resolves({ TemplateBody: JSON.stringify(template) });
    const { done, steps: run } = steps(0);
    await deploy([], { STACK_NAME: 'Staging' }, run);
    expect(deployed(done)).toBe('cdk deploy Staging -c reservableConcurrency=900');
    expect(done[0]).toContain(`(this stack holds ${FULL})`);
  });

  it('counts nothing of a stack whose create rolled back: its template was never applied', async () => {
    newAccount(1_000);
    cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'S', StackStatus: 'ROLLBACK_COMPLETE', CreationTime: new Date() }] });
    const { done, steps: run } = steps(0);
    await deploy([], {}, run);
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi -c reservableConcurrency=900');
    expect(cloudFormation.commandCalls(GetTemplateCommand)).toHaveLength(0);
  });

  it('reads nothing when the flags already set -c reservableConcurrency, and passes them as given', async () => {
    const { done, steps: run } = steps(0);
    expect(await deploy(['--context', 'reservableConcurrency=50'], {}, run)).toBe(0);
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi --context reservableConcurrency=50');
    expect(lambda.commandCalls(GetAccountSettingsCommand)).toHaveLength(0);
  });

  it('deploys nothing when the account cannot be read, saying which permissions to allow or which flag to give', async () => {
    lambda.on(GetAccountSettingsCommand).rejects(new Error('AccessDeniedException: lambda:GetAccountSettings'));
    const { done, steps: run } = steps(0);
    expect(await deploy([], {}, run)).toBe(1);
    expect(deployed(done)).toBe('');
    expect(done.at(-1)).toMatch(
      /^Could not read the account's Lambda concurrency \(AccessDeniedException: lambda:GetAccountSettings\); nothing was deployed\./,
    );
    expect(done.at(-1)).toContain('-c reservableConcurrency=0');
  });
});

describe("npm run deploy: the Region's API Gateway throttle", () => {
  it('deploys in one of the 13 Regions of 2,500 requests a second, saying the throttles there and how to raise them', async () => {
    newAccount(1_000);
    const { done, steps: run } = steps(0, undefined, 'eu-south-1');
    expect(await deploy([], {}, run)).toBe(0);
    const note = done.find((line) => line.startsWith('Note: in eu-south-1'));
    expect(note).toContain('2500 requests a second (burst 1250) across all its APIs, not 10000');
    expect(note).toContain('quota code L-8A5B8E43');
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi -c reservableConcurrency=900');
  });

  it('says nothing of throttles in a Region of 10,000', async () => {
    newAccount(1_000);
    const { done, steps: run } = steps(0, undefined, 'eu-west-1');
    await deploy([], {}, run);
    expect(done.some((line) => line.startsWith('Note:'))).toBe(false);
  });
});

describe('npm run deploy: which stacks, and which Regions to bootstrap', () => {
  it('names the stack, so an app of two stacks (-c waf=true outside us-east-1) deploys the web ACL stack first instead of refusing', () => {
    // CDK refuses a deploy naming no stack in an app of several; a named stack brings its dependencies unless --exclusively.
    expect(cdkDeployArgs('ScriptDistributionDeveloperApi', ['-c', 'waf=true'])).toEqual(['ScriptDistributionDeveloperApi', '-c', 'waf=true']);
    expect(cdkDeployArgs('Staging', [])).toEqual(['Staging']);
    expect(cdkDeployArgs('ScriptDistributionDeveloperApi', ['--all', '-c', 'waf=true'])).toEqual(['--all', '-c', 'waf=true']);
  });

  it('bootstraps us-east-1 beside the stack Region with -c waf=true in any spelling, and only the stack Region otherwise', () => {
    // "Bootstrap your environment", https://docs.aws.amazon.com/cdk/v2/guide/bootstrapping-env.html: every environment a stack deploys to.
    expect(regionsToBootstrap('eu-west-1', ['-c', 'waf=true'])).toEqual(['eu-west-1', 'us-east-1']);
    expect(regionsToBootstrap('eu-west-1', ['--context', 'waf=true'])).toEqual(['eu-west-1', 'us-east-1']);
    expect(regionsToBootstrap('eu-west-1', ['--context=waf=true'])).toEqual(['eu-west-1', 'us-east-1']);
    expect(regionsToBootstrap('eu-west-1', ['-c', 'waf=true', '-c', 'waf=false'])).toEqual(['eu-west-1']);
    expect(regionsToBootstrap('us-east-1', ['-c', 'waf=true'])).toEqual(['us-east-1']);
    expect(regionsToBootstrap('eu-west-1', ['-c', 'console=false'])).toEqual(['eu-west-1']);
  });

  it('says before cdk deploy which Regions need cdk bootstrap, and deploys the named stack', async () => {
    newAccount(10);
    const { done, steps: run } = steps(0, async () => ({ migrated: 0 }), 'eu-west-1');
    expect(await deploy(['-c', 'waf=true'], {}, run)).toBe(0);
    expect(done).toContain(
      'Deploying stack ScriptDistributionDeveloperApi to eu-west-1 and us-east-1: each Region needs cdk bootstrap once (npx cdk bootstrap with the same -c settings bootstraps all of them).',
    );
    expect(deployed(done)).toBe('cdk deploy ScriptDistributionDeveloperApi -c waf=true -c reservableConcurrency=0');
  });
});

describe('npm run deploy: token migrate', () => {
  it('migrates the tokens of the deployed stack (STACK_NAME, else the default) once cdk deploy succeeded', async () => {
    const { done, steps: run } = steps(0, async () => ({ migrated: 2 }));
    expect(await deploy(['--require-approval', 'never', '-c', 'reservableConcurrency=0'], { STACK_NAME: 'Staging' }, run)).toBe(0);
    expect(done).toEqual([
      'Deploying stack Staging to us-east-1: each Region needs cdk bootstrap once (npx cdk bootstrap with the same -c settings bootstraps it).',
      'cdk deploy Staging --require-approval never -c reservableConcurrency=0',
      'token migrate Staging',
      'token migrate: 2 token(s) stored before scopes now carry their write scope',
    ]);
  });

  it('migrates nothing when cdk deploy failed, and exits with its status', async () => {
    const { done, steps: run } = steps(3, async () => ({ migrated: 0 }));
    expect(await deploy(['--context=reservableConcurrency=0'], {}, run)).toBe(3);
    expect(done.filter((line) => !line.startsWith('Deploying stack'))).toEqual(['cdk deploy ScriptDistributionDeveloperApi --context=reservableConcurrency=0']);
  });

  it('exits non-zero saying what to run when the migration fails after the deploy', async () => {
    const { done, steps: run } = steps(0, async () => {
      throw new Error('AccessDeniedException: dynamodb:Scan');
    });
    expect(await deploy(['-c', 'reservableConcurrency=0'], {}, run)).toBe(1);
    expect(done.at(-1)).toMatch(
      /^The stack is deployed, but token migrate failed \(AccessDeniedException: dynamodb:Scan\): run it again with npm run -s dashboard -- token migrate/,
    );
    expect(done[2]).toBe('token migrate ScriptDistributionDeveloperApi');
  });
});
