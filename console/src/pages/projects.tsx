import type { useLoad } from '../components';
import { LoadError } from '../components';
import { href } from '../logic/routes';

export interface Project {
  id: string;
  name: string;
  plan: string;
}

export function ProjectsPage({ projects }: { projects: ReturnType<typeof useLoad<Project[]>> }) {
  return (
    <>
      <h1 tabIndex={-1}>Projects</h1>
      {projects.error !== undefined && <LoadError error={projects.error} />}
      {projects.loading && !projects.data && <p>Loading your projects…</p>}
      {projects.data?.length === 0 && <p>You have no project yet: the operator creates one with npm run dashboard -- project create.</p>}
      {projects.data && projects.data.length > 0 && (
        <ul class="projects">
          {projects.data.map((project) => (
            <li key={project.id}>
              <a href={href({ page: 'keys', projectId: project.id })}>{project.name}</a>{' '}
              <span class="muted">
                {project.id} · {project.plan} plan
                {project.plan !== 'business' && ' (the console, like the API, needs the Business plan)'}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
