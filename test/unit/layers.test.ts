import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
// Run with this Node rather than through node_modules/.bin, whose shim differs on Windows.
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/**
 * A tree of one or two violations per rule, and an allowed import beside each, cruised with the project's config.
 * Imports go through the package.json aliases as the code's do, and through relative paths.
 */
const FIXTURE: Record<string, string> = {
  'tsconfig.json': '{}',
  'package.json': JSON.stringify({
    type: 'module',
    imports: { '#domain/*': './lambdas/domain/*.ts', '#adapters/*': './lambdas/adapters/*.ts', '#test-support/*': './test/support/*.ts' },
  }),
  'lambdas/domain/rule.ts': "import type { Row } from '#adapters/store';\nimport { plain } from './plain';\nexport const rule = (row: Row) => plain(row);\n",
  'lambdas/domain/http-rule.ts': "import { handler } from '../http/route';\nexport const rule = handler;\n",
  'lambdas/domain/plain.ts': "import { PLAIN } from '#domain/plain-leaf';\nexport const plain = (value: unknown) => value ?? PLAIN;\n",
  'lambdas/domain/plain-leaf.ts': 'export const PLAIN = 1;\n',
  'lambdas/domain/sdk-rule.ts': "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nexport const client = new DynamoDBClient({});\n",
  'lambdas/domain/middy-rule.ts': "import middy from '@middy/core';\nexport const wrap = middy;\n",
  'lambdas/adapters/store.ts': "import { plain } from '#domain/plain';\nexport type Row = { id: string };\nexport const store = plain;\n",
  'lambdas/http/route.ts': "import { rule } from '#domain/rule';\nexport const handler = rule;\n",
  'local/server.ts': "import { fake } from '#test-support/fake';\nexport const server = fake;\n",
  'test/support/fake.ts': 'export const fake = 1;\n',
  'test/unit/fake.test.ts':
    "import { fake } from '../support/fake';\nimport { build } from '../../scripts/build-document';\nexport const both = [fake, build];\n",
  'bench/run.ts': "import { fake } from '../test/support/fake';\nexport const run = fake;\n",
  'dashboard/a.ts': "import type { B } from './b';\nexport type A = { b?: B };\n",
  'dashboard/b.ts': "import type { A } from './a';\nexport type B = { a?: A };\n",
  'local/docs.ts': "import { build } from '../scripts/build-document';\nexport const docs = build;\n",
  'scripts/build-document.ts': 'export const build = 1;\n',
  'scripts/generate.ts': "import { build } from './build-document';\nexport const generate = build;\n",
  'console/src/page.tsx': "import { missing } from './nowhere';\nexport const Page = () => <p>{missing}</p>;\n",
  'lambdas/http/cli-error.ts':
    "import { CommandError } from '../../dashboard/errors';\nimport { PLAIN } from '../domain/plain-leaf';\nexport const both = [CommandError, PLAIN];\n",
  'lambdas/runtime/local-port.ts': "import { port } from '../../local/port';\nexport const both = port;\n",
  'dashboard/errors.ts': 'export class CommandError extends Error {}\n',
  'local/port.ts': 'export const port = 3000;\n',
  'lambdas/adapters/http-aware.ts': "import { handler } from '../http/route';\nimport { plain } from '#domain/plain';\nexport const both = [handler, plain];\n",
  'lambdas/adapters/runtime-aware.ts': "import { wired } from '../runtime/wiring';\nexport const both = wired;\n",
  'lambdas/runtime/wiring.ts': "import { store } from '../adapters/store';\nexport const wired = store;\n",
  'lambdas/functions/one.ts': "import { handler as other } from './two';\nimport { wired } from '../runtime/wiring';\nexport const handler = [other, wired];\n",
  'lambdas/functions/two.ts': "import { handler as route } from '../http/route';\nexport const handler = route;\n",
};

let dir: string;
let violations: Violation[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'layers-'));
  for (const [path, text] of Object.entries(FIXTURE)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  // The packages resolve as in the project (an AWS package is matched by its node_modules path). A junction needs no
  // privilege on Windows; elsewhere the type is ignored.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'junction');
  // depcruise exits non-zero when it finds violations; its JSON report is what the test reads.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', 'lambdas', 'local', 'dashboard', 'console', 'bench', 'scripts', 'test'],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  violations = (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
});

afterAll(() => rm(dir, { recursive: true, force: true }));

const found = (rule: string) =>
  violations
    .filter((violation) => violation.rule.name === rule)
    // A package resolves through the link to the project's own node_modules: name it from there.
    .map(({ from, to }) => `${from} -> ${to.replace(/^.*node_modules\//, 'node_modules/')}`)
    .toSorted();

describe('the layer rules of .dependency-cruiser.cjs', () => {
  it('refuses an import circle, even one closed by types only', () => {
    expect(found('no-circular')).toEqual(['dashboard/a.ts -> dashboard/b.ts']);
  });

  it('refuses a domain module importing an adapter, an HTTP module or an AWS or middy package, and allows one domain module importing another', () => {
    expect(found('domain-is-plain')).toEqual([
      'lambdas/domain/http-rule.ts -> lambdas/http/route.ts',
      expect.stringMatching(/^lambdas\/domain\/middy-rule\.ts -> node_modules\/@middy\/core\//),
      'lambdas/domain/rule.ts -> lambdas/adapters/store.ts',
      expect.stringMatching(/^lambdas\/domain\/sdk-rule\.ts -> node_modules\/@aws-sdk\/client-dynamodb\//),
    ]);
  });

  it('refuses test/ imported from outside test/ and bench/', () => {
    expect(found('no-test-code-outside-tests')).toEqual(['local/server.ts -> test/support/fake.ts']);
  });

  it('refuses a module importing a script of scripts/, and allows a test or another script to', () => {
    expect(found('scripts-are-entry-points')).toEqual(['local/docs.ts -> scripts/build-document.ts']);
  });

  it('refuses lambdas/ importing the admin CLI or the local stack, which no Lambda bundle may carry', () => {
    expect(found('lambdas-are-deployable')).toEqual(['lambdas/http/cli-error.ts -> dashboard/errors.ts', 'lambdas/runtime/local-port.ts -> local/port.ts']);
  });

  it('refuses an adapter importing an HTTP module or the runtime wiring, and allows the runtime importing an adapter', () => {
    expect(found('adapters-below-http')).toEqual([
      'lambdas/adapters/http-aware.ts -> lambdas/http/route.ts',
      'lambdas/adapters/runtime-aware.ts -> lambdas/runtime/wiring.ts',
    ]);
  });

  it('refuses a function entry importing another, and allows it the runtime and the HTTP contract', () => {
    expect(found('entries-stand-alone')).toEqual(['lambdas/functions/one.ts -> lambdas/functions/two.ts']);
  });

  it('refuses an import it cannot resolve, which would escape the rules above', () => {
    expect(found('resolvable')).toEqual(['console/src/page.tsx -> ./nowhere']);
  });
});
