import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '#dashboard/commands';
import { DEFAULT_STACK_NAME, locateDeployedTable, oneLine, openContext, readStackOutputs } from '#dashboard/context';

/**
 * `npm run deploy [-- <cdk deploy flags>]`: `cdk deploy`, then the step the deployed code relies on: `token migrate`,
 * which gives tokens stored before scopes existed their `write` scope (until then they can only read, see scopeOf).
 * The migration goes through the dashboard's command table, so it is audited like the command.
 */
export interface DeploySteps {
  cdkDeploy(args: readonly string[]): number;
  migrateTokens(stackName: string): Promise<{ migrated: number }>;
  log(line: string): void;
}

export async function deploy(args: readonly string[], env: NodeJS.ProcessEnv, steps: DeploySteps): Promise<number> {
  const status = steps.cdkDeploy(args);
  if (status !== 0) return status;
  const stackName = env.STACK_NAME || DEFAULT_STACK_NAME;
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
