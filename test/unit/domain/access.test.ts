import { describe, expect, it } from 'vitest';
import { authorizeProjectAccess, REQUIRED_PLAN } from '#domain/access';
import { DomainError, PlanNotAllowed, PROJECT_NOT_FOUND, ProjectNotFound } from '#domain/errors';
import type { Plan, Project } from '#domain/model';

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

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('project access (spec §4, §5)', () => {
  it('lets the owner of a Business plan project in', () => {
    const own = project();
    expect(authorizeProjectAccess(own, 'own_owner')).toBe(own);
    expect(REQUIRED_PLAN).toBe('business');
  });

  it('refuses an unknown project as ProjectNotFound, "Project not found"', () => {
    const error = refusal(() => authorizeProjectAccess(undefined, 'own_owner'));
    expect(error).toBeInstanceOf(ProjectNotFound);
    expect(error.message).toBe('Project not found');
  });

  it("answers another owner's project exactly as an unknown one, so ids cannot be enumerated", () => {
    const unknown = refusal(() => authorizeProjectAccess(undefined, 'own_other'));
    const foreign = refusal(() => authorizeProjectAccess(project(), 'own_other'));
    expect(foreign).toEqual(unknown);
    expect(foreign).toBeInstanceOf(ProjectNotFound);
    expect(foreign.message).toBe(PROJECT_NOT_FOUND);
  });

  it("refuses another owner's project on another plan as ProjectNotFound too, revealing nothing about its plan", () => {
    const error = refusal(() => authorizeProjectAccess(project({ plan: 'free' }), 'own_other'));
    expect(error).toBeInstanceOf(ProjectNotFound);
  });

  it.each<Plan>(['pro', 'free'])('refuses the owner of a %s plan project as PlanNotAllowed, naming the Business plan', (plan) => {
    const error = refusal(() => authorizeProjectAccess(project({ plan }), 'own_owner'));
    expect(error).toBeInstanceOf(PlanNotAllowed);
    expect(error.message).toContain('Business plan');
    expect(error.message).toContain(plan);
  });
});
