import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeveloperApiStack } from '#lib/developer-api-stack';

const app = new App();
new DeveloperApiStack(app, 'ScriptDistributionDeveloperApi', {
  description: 'Script Distribution Developer API: keys, versions and webhooks of a project over HTTP, with Discord notifications',
});
// Every synth is checked against the AWS Solutions rules; an unacknowledged finding fails `cdk synth`.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
