import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, expect, it } from 'vitest';
import { ROUTES } from '#http/routes';
import { DeveloperApiStack, FUNCTIONS_BESIDE_ROUTES } from '#lib/developer-api-stack';

const MAX_BUNDLE_BYTES = 300 * 1024;
const outdir = mkdtempSync(join(tmpdir(), 'developer-api-bundling-'));

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

it('bundles every function as a minified ESM index.mjs under 300 KB with the AWS SDK left to the runtime and no OpenAPI text', () => {
  const { context } = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
  const app = new App({ outdir, context: { ...context, console: 'false' } });
  const stack = new DeveloperApiStack(app, 'DeveloperApiBundling');
  const template = Template.fromStack(stack);
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Code: { S3Key: string } } }[];
  expect(functions).toHaveLength(ROUTES.length + FUNCTIONS_BESIDE_ROUTES);

  for (const fn of functions) {
    const assetDir = join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
    const bundle = join(assetDir, 'index.mjs');
    expect(existsSync(bundle), bundle).toBe(true);
    expect(statSync(bundle).size, bundle).toBeLessThan(MAX_BUNDLE_BYTES);

    const code = readFileSync(bundle, 'utf8');
    // ESM: the handler leaves through an export statement, and the SDK arrives through import statements.
    expect(code, bundle).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
    expect(code, bundle).toMatch(/import\s*\{[^}]*\}\s*from\s*"@aws-sdk\/[a-z-]+"/);

    // The source map lists every module esbuild put in the bundle: none of them is the SDK or its Smithy core.
    const { sources } = JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] };
    expect(
      sources.some((source) => source.includes('lambdas/')),
      bundle,
    ).toBe(true);
    expect(
      sources.filter((source) => /node_modules\/@(aws-sdk|smithy)\//.test(source)),
      bundle,
    ).toEqual([]);
    // The OpenAPI document and each route's operation (`*.doc.ts`) are for openapi.json only; no admin CLI code either.
    expect(
      sources.filter((source) => /lambdas\/http\/(openapi\/|.*\.doc\.ts$)|(^|\/)dashboard\//.test(source)),
      bundle,
    ).toEqual([]);
  }
});
