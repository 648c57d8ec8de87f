import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DEFAULT_STACK_NAME } from '#lib/context';
import { DeveloperApiStack, frontDoorContext } from '#lib/developer-api-stack';

const app = new App();

/**
 * The console's files, built before synth into console/dist/ by `buildConsole` (console/build.ts, imported only when
 * the console is deployed, so `-c console=false` synthesizes without it).
 */
async function consoleFiles(): Promise<s3deploy.ISource> {
  const builder = new URL('../console/build.ts', import.meta.url);
  if (!existsSync(builder)) throw new Error('console/build.ts is missing, so the console cannot be built: synthesize with -c console=false');
  const { buildConsole } = (await import(builder.href)) as { buildConsole: (outDir: string) => Promise<void> };
  const outDir = fileURLToPath(new URL('../console/dist/', import.meta.url));
  await buildConsole(outDir);
  return s3deploy.Source.asset(outDir);
}

// STACK_NAME names the stack as `npm run deploy` and the dashboard read it.
new DeveloperApiStack(app, process.env.STACK_NAME || DEFAULT_STACK_NAME, {
  description: 'Script Distribution Developer API: keys, versions and webhooks of a project over HTTP, with Discord notifications',
  // The profile's account and Region when there is one (`-c waf=true` needs the Region: its web ACL lives in us-east-1).
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  ...(frontDoorContext(app.node).console ? { consoleFiles: await consoleFiles() } : {}),
});
// Every synth is checked against the AWS Solutions rules; an unacknowledged finding fails `cdk synth`.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
