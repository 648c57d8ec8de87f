import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
// The rule index is a section of docs/decisions.md, running to the next section or the end of the page.
const DECISIONS = readFileSync(join(ROOT, 'docs', 'decisions.md'), 'utf8');
const START = DECISIONS.indexOf('## Where each rule lives');
const END = DECISIONS.indexOf('\n## ', START + 1);
const INDEX = START === -1 ? '' : DECISIONS.slice(START, END === -1 ? undefined : END);

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => join(folder, path));
}

// Escapes differ between a title in code and the same title in Markdown; the words do not.
const unescaped = (text: string) => text.replaceAll('\\', '');
const testSources = unescaped(
  sourcesUnder('test')
    .map((path) => readFileSync(join(ROOT, path), 'utf8'))
    .join('\n'),
);
const rows = INDEX.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Rule') && !line.startsWith('|---'));

describe('the rule index of docs/decisions.md, the map from each rule to its code and tests', () => {
  it('has a row for each rule, each naming code and a test', () => {
    expect(rows.length).toBeGreaterThan(40);
    for (const row of rows) expect(row.split(' | '), row).toHaveLength(3);
  });

  it('names only files that exist', () => {
    const paths = [...INDEX.matchAll(/`((?:lambdas|lib|local|dashboard|sdapi|test|bench|scripts|examples)\/[\w./-]+\.(?:ts|luau))`/g)].map(
      (match) => match[1] ?? '',
    );
    expect(paths.length).toBeGreaterThan(40);
    for (const path of paths) expect(existsSync(join(ROOT, path)), path).toBe(true);
  });

  it('quotes only test titles that a test file holds, so a renamed test shows here', () => {
    const titles = [...INDEX.matchAll(/“([^”]+)”/g)].map((match) => match[1] ?? '');
    expect(titles.length).toBeGreaterThan(60);
    const missing = titles.filter((title) => !testSources.includes(title));
    expect(missing).toEqual([]);
  });
});
