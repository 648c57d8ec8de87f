import { keyOf } from '#adapters/layout';
import { CALLER, PROJECT_ID } from '#test-support/api-harness';

/** The caller's Business plan project as the table stores it, for the tests that answer for DynamoDB below the stores. */
export function projectItem(): Record<string, unknown> {
  return {
    ...keyOf.project(PROJECT_ID),
    entity: 'PROJECT',
    id: PROJECT_ID,
    ownerId: CALLER.ownerId,
    name: 'Test Script',
    plan: 'business',
    currentVersionId: null,
    keyCount: 0,
    versionCount: 0,
    createdAt: 1_699_000_000,
  };
}
