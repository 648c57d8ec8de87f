import { describe, expect, it } from 'vitest';
import { type DeploySteps, deploy } from '../../../scripts/deploy';

/** `npm run deploy`: cdk deploy, then token migrate against the deployed stack, so no token is left without its scope. */
function steps(cdkStatus: number, migrate: DeploySteps['migrateTokens']) {
  const done: string[] = [];
  return {
    done,
    steps: {
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

describe('npm run deploy', () => {
  it('migrates the tokens of the deployed stack (STACK_NAME, else the default) once cdk deploy succeeded', async () => {
    const { done, steps: run } = steps(0, async () => ({ migrated: 2 }));
    expect(await deploy(['--require-approval', 'never'], { STACK_NAME: 'Staging' }, run)).toBe(0);
    expect(done).toEqual([
      'cdk deploy --require-approval never',
      'token migrate Staging',
      'token migrate: 2 token(s) stored before scopes now carry their write scope',
    ]);
  });

  it('migrates nothing when cdk deploy failed, and exits with its status', async () => {
    const { done, steps: run } = steps(3, async () => ({ migrated: 0 }));
    expect(await deploy([], {}, run)).toBe(3);
    expect(done).toEqual(['cdk deploy']);
  });

  it('exits non-zero saying what to run when the migration fails after the deploy', async () => {
    const { done, steps: run } = steps(0, async () => {
      throw new Error('AccessDeniedException: dynamodb:Scan');
    });
    expect(await deploy([], {}, run)).toBe(1);
    expect(done.at(-1)).toMatch(
      /^The stack is deployed, but token migrate failed \(AccessDeniedException: dynamodb:Scan\): run it again with npm run -s dashboard -- token migrate/,
    );
    expect(done[1]).toBe('token migrate ScriptDistributionDeveloperApi');
  });
});
