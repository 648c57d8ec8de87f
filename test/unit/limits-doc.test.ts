import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { LIMITS_PATH, limitsDocument } from '#lib/limits-document';

it('docs/limits.md is what npm run limits makes of the constants today', () => {
  expect(readFileSync(LIMITS_PATH, 'utf8'), 'docs/limits.md is stale: run npm run limits').toBe(limitsDocument());
});
