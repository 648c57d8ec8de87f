import { writeFileSync } from 'node:fs';
import { LIMITS_PATH, limitsDocument } from '#lib/limits-document';

// `npm run limits`: regenerate docs/limits.md from the constants; a unit test fails while it is stale.

writeFileSync(LIMITS_PATH, limitsDocument());
console.log(`Wrote ${LIMITS_PATH}`);
