import { describe, expect, it } from 'vitest';
import { REQUIRED_PLAN, authorizeProjectAccess } from '../../../lambdas/domain/access';
import { ApiError, PROJECT_NOT_FOUND } from '../../../lambdas/domain/errors';
import type { Plan, Project } from '../../../lambdas/domain/model';

const project = (overrides: Partial<Project> = {}): Project => ({
  id: 'prj_1',
  ownerId: 'own_owner',
  name: 'Script',
  plan: 'business',
  currentVersionId: null,
  keyCount: 0,
  createdAt: 1_700_000_000,
  ...overrides,
});

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('project access (spec §4, §5)', () => {
  it('lets the owner of a Business plan project in', () => {
    const own = project();
    expect(authorizeProjectAccess(own, 'own_owner')).toBe(own);
    expect(REQUIRED_PLAN).toBe('business');
  });

  it('answers an unknown project with 404 "Project not found"', () => {
    const error = refusal(() => authorizeProjectAccess(undefined, 'own_owner'));
    expect([error.status, error.message]).toEqual([404, 'Project not found']);
  });

  it("answers another owner's project exactly as an unknown one, so ids cannot be enumerated", () => {
    const unknown = refusal(() => authorizeProjectAccess(undefined, 'own_other'));
    const foreign = refusal(() => authorizeProjectAccess(project(), 'own_other'));
    expect(foreign).toMatchObject({ status: unknown.status, message: unknown.message, headers: unknown.headers });
    expect(foreign.message).toBe(PROJECT_NOT_FOUND);
  });

  it("answers another owner's project on another plan with 404 too, revealing nothing about its plan", () => {
    const error = refusal(() => authorizeProjectAccess(project({ plan: 'free' }), 'own_other'));
    expect([error.status, error.message]).toEqual([404, 'Project not found']);
  });

  it.each<Plan>(['pro', 'free'])('refuses the owner of a %s plan project with 403 naming the Business plan', (plan) => {
    const error = refusal(() => authorizeProjectAccess(project({ plan }), 'own_owner'));
    expect(error.status).toBe(403);
    expect(error.message).toContain('Business plan');
    expect(error.message).toContain(plan);
  });
});
