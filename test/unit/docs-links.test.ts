import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

/** The text outside fenced code blocks, where a `[x](y)` or a `#` line is Markdown and not an example. */
function prose(text: string): string {
  const lines: string[] = [];
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    else if (!inFence) lines.push(line);
  }
  return lines.join('\n');
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = (heading ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every link of a page that points inside the repository (or beside it): `[text](path#anchor)`. */
function localLinks(page: string): { target: string; path: string; anchor: string | undefined }[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8')).replace(/`[^`\n]*`(?!\])/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))
    .map((target) => {
      const [path = '', anchor] = target.split('#');
      return { target, path, anchor };
    });
}

describe('links in README.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(PAGES.length).toBeGreaterThan(8);
    expect(localLinks('README.md').length).toBeGreaterThan(15);
  });

  it.each(PAGES)('%s: every relative link names a file that exists, and every #anchor a heading of it', (page) => {
    const broken: string[] = [];
    for (const link of localLinks(page)) {
      const file = link.path === '' ? join(ROOT, page) : join(ROOT, dirname(page), link.path);
      if (!existsSync(file)) {
        broken.push(`${link.target}: no file ${relative(ROOT, file)}`);
        continue;
      }
      if (link.anchor !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(link.anchor)) {
        broken.push(`${link.target}: no heading with anchor #${link.anchor} in ${relative(ROOT, file)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('computes anchors as GitHub does, so a renamed heading shows here', () => {
    expect([
      ...headingAnchors('# Deploy\n## API tokens: scope, rotate, revoke\n```\n# not a heading\n```\n## Deploy\n### `sdapi leak` on 50,000 keys'),
    ]).toEqual(['deploy', 'api-tokens-scope-rotate-revoke', 'deploy-1', 'sdapi-leak-on-50000-keys']);
  });
});
