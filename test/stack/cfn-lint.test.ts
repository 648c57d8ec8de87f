import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { synthesizeApiStack } from '#test-support/stack-template';

/**
 * cfn-lint (AWS CloudFormation's linter: resource specifications, intrinsic functions, Region availability) over the
 * templates `cdk synth` writes for the deploys the docs describe. `.ci/run` installs none (PyPI is out of reach;
 * Debian has no package): it prints the version and stops on CI (`CI=true`) when the binary is missing; elsewhere this
 * file is skipped with a warning that says so.
 */

/** Checks ignored, each with why. */
const IGNORED = {
  // CDK names in DependsOn what a resource also references (a function's role beside the role's default policy, the
  // console copy's bucket and distribution): a redundant edge, which changes no order of creation.
  W3005: 'dependency already enforced by a Ref or GetAtt',
} as const;

const version = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
const installed = version.status === 0;
if (!installed) {
  console.warn(
    '\n!!! cfn-lint is not installed: test/stack/cfn-lint.test.ts is SKIPPED. Install cfn-lint 1.x (pip install cfn-lint) to run it; on CI (CI=true) its absence fails the run.\n',
  );
}

interface Finding {
  Rule: { Id: string };
  Message: string;
  Filename: string;
}

describe('cfn-lint', () => {
  it.runIf(!installed && process.env.CI === 'true')('is installed on CI', () => {
    expect.fail('cfn-lint is missing on CI: .ci/run should have stopped before the tests');
  });

  it.skipIf(!installed)(
    `finds nothing in the synthesized templates (ignoring ${Object.keys(IGNORED).join(', ')}) [${version.stdout?.trim()}]`,
    () => {
      const apps = [
        synthesizeApiStack().app,
        synthesizeApiStack({ frontDoor: 'false' }).app,
        synthesizeApiStack({ waf: 'true' }, { account: '123456789012', region: 'sa-east-1' }).app,
      ];
      const stacks = apps.flatMap((app) => app.synth().stacks);
      const files = stacks.map((stack) => stack.templateFullPath);
      const regions = [...new Set(['eu-west-1', ...stacks.map((stack) => stack.environment.region).filter((region) => region !== 'unknown-region')])];
      const run = spawnSync('cfn-lint', ['--format', 'json', '--regions', ...regions, '--ignore-checks', ...Object.keys(IGNORED), '--', ...files], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(run.error).toBeUndefined();
      const findings = JSON.parse(run.stdout || '[]') as Finding[];
      expect(findings.map((finding) => `${finding.Rule.Id} ${finding.Filename.split('/').at(-1)}: ${finding.Message}`)).toEqual([]);
      expect(files).toHaveLength(4);
    },
    600_000,
  );
});
