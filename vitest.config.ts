import { defineConfig } from 'vitest/config';

// The Lambda runtime is Node 22, and so is what package.json's engines ask for: say so before anything fails oddly.
const nodeMajor = Number(process.versions.node.split('.')[0]);
if (nodeMajor < 22) {
  throw new Error(
    `The tests need Node 22 or newer (the Lambda runtime's version); this is Node ${process.versions.node}. Install Node 22 from https://nodejs.org and run npm ci again.`,
  );
}

/**
 * Three levels, each runnable alone: unit (no I/O), integration (one DynamoDB Local per run), stack (CDK template).
 * Timeouts are hang guards only, far above a normal run on a busy 2-core machine: no test asserts on the clock.
 */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 60_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/dynamodb-global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      { test: { name: 'stack', include: ['test/stack/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 600_000 } },
    ],
  },
});
