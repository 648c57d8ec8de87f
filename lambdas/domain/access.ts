import { PlanNotAllowed, ProjectNotFound } from './errors';
import type { Project } from './model';

/** The API requires a Business plan (spec §1, §8). */
export const REQUIRED_PLAN = 'business';

/**
 * Ownership and plan gate for every endpoint. A missing project and another owner's project are the
 * same 404 (no enumeration); the plan is checked only for the owner, so the 403 reveals nothing to others.
 */
export function authorizeProjectAccess(project: Project | undefined, callerOwnerId: string): Project {
  if (!project || project.ownerId !== callerOwnerId) throw new ProjectNotFound();
  if (project.plan !== REQUIRED_PLAN) throw new PlanNotAllowed(project.id, project.plan);
  return project;
}
