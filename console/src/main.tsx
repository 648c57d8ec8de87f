import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, get, messageOf, onSessionEnded } from './api';
import { useLoad } from './components';
import { formatLimits } from './logic/format';
import { href, PAGE_TITLES, PROJECT_PAGES, parseRoute, type Route } from './logic/routes';
import { AuditPage } from './pages/audit';
import { BlacklistPage } from './pages/blacklist';
import { KeyDetailPage } from './pages/key-detail';
import { KeysPage } from './pages/keys';
import { LeakPage } from './pages/leak';
import { LoaderPage } from './pages/loader';
import { type Project, ProjectsPage } from './pages/projects';
import { ShopsPage } from './pages/shops';
import { type Session, SignInPage } from './pages/sign-in';
import { StatsPage } from './pages/stats';
import { TokensPage } from './pages/tokens';
import { VersionsPage } from './pages/versions';
import { WebhooksPage } from './pages/webhooks';

type SessionState = { state: 'checking' } | { state: 'signed-out'; reason?: string } | { state: 'signed-in'; session: Session };

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    // Effects run after the first paint: a fragment changed in between would otherwise be missed.
    changed();
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function App() {
  const [session, setSession] = useState<SessionState>({ state: 'checking' });
  useEffect(() => {
    api<Session>('GET', '/session', { quietUnauthorized: true }).then(
      (current) => setSession({ state: 'signed-in', session: current }),
      () => setSession({ state: 'signed-out' }),
    );
    // A 401 while the session is still being checked only means "not signed in": no reason to give.
    return onSessionEnded(() =>
      setSession((current) =>
        current.state === 'signed-in'
          ? { state: 'signed-out', reason: 'Your session ended (signed out, expired, or its token was revoked): sign in again.' }
          : { state: 'signed-out' },
      ),
    );
  }, []);
  if (session.state === 'signed-out')
    return <SignInPage reason={session.reason} onSignedIn={(signedIn) => setSession({ state: 'signed-in', session: signedIn })} />;
  // While the session is checked the page already asks for its data: the first table costs one round trip, not two.
  return <SignedIn session={session.state === 'signed-in' ? session.session : null} onSignedOut={() => setSession({ state: 'signed-out' })} />;
}

function SignedIn({ session, onSignedOut }: { session: Session | null; onSignedOut: () => void }) {
  const route = useRoute();
  const projects = useLoad(() => get<{ projects: Project[] }>('/projects').then((answer) => answer.projects), []);
  const [signOutError, setSignOutError] = useState('');
  const project = 'projectId' in route ? projects.data?.find((candidate) => candidate.id === route.projectId) : undefined;

  // A new page: its heading takes the focus (a screen reader announces where it is) and the title follows.
  const routeKey = href(route);
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [routeKey]);

  const signOut = async () => {
    try {
      await api('DELETE', '/session', { quietUnauthorized: true });
      onSignedOut();
    } catch (error) {
      setSignOutError(messageOf(error));
    }
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/projects">
          Script Distribution console
        </a>
        <nav aria-label="Console">
          <a href="#/projects" aria-current={route.page === 'projects' ? 'page' : undefined}>
            Projects
          </a>
          <a href="#/tokens" aria-current={route.page === 'tokens' ? 'page' : undefined}>
            Tokens
          </a>
        </nav>
        <span class="who">{session && `Owner ${session.owner_id} · ${session.scope === 'read' ? 'read only' : 'read and write'}`}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
        {signOutError && (
          <span role="alert" class="notice error">
            {signOutError}
          </span>
        )}
      </header>
      {'projectId' in route && (
        <nav aria-label="Project" class="project-nav">
          <span class="project-name">{project?.name ?? route.projectId}</span>
          {PROJECT_PAGES.map((page) => (
            <a
              key={page}
              href={href({ page, projectId: route.projectId })}
              aria-current={route.page === page || (route.page === 'key' && page === 'keys') ? 'page' : undefined}
            >
              {PAGE_TITLES[page]}
            </a>
          ))}
        </nav>
      )}
      <main id="main">
        {session?.scope === 'read' && (
          <p class="notice info">This session was opened with a read-scope token: you can look at everything, and every change is refused.</p>
        )}
        {session && formatLimits(session) !== '' && (
          <p class="notice info">This session was opened with a token limited to {formatLimits(session)}: everything else is refused.</p>
        )}
        <Page route={route} projects={projects} session={session} />
      </main>
    </>
  );
}

function Page({ route, projects, session }: { route: Route; projects: ReturnType<typeof useLoad<Project[]>>; session: Session | null }) {
  switch (route.page) {
    case 'projects':
      return <ProjectsPage projects={projects} />;
    case 'tokens':
      return <TokensPage session={session} projects={projects.data ?? []} />;
    case 'keys':
      return <KeysPage projectId={route.projectId} />;
    case 'key':
      return <KeyDetailPage projectId={route.projectId} keyId={route.keyId} />;
    case 'versions':
      return <VersionsPage projectId={route.projectId} />;
    case 'webhooks':
      return <WebhooksPage projectId={route.projectId} />;
    case 'stats':
      return <StatsPage projectId={route.projectId} />;
    case 'leak':
      return <LeakPage projectId={route.projectId} />;
    case 'blacklist':
      return <BlacklistPage projectId={route.projectId} />;
    case 'audit':
      return <AuditPage projectId={route.projectId} />;
    case 'loader':
      return <LoaderPage projectId={route.projectId} />;
    case 'shops':
      return <ShopsPage projectId={route.projectId} />;
    case 'not-found':
      return (
        <>
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            Nothing is at this address. <a href="#/projects">Go to your projects</a>.
          </p>
        </>
      );
  }
}

const root = document.getElementById('app');
if (root) {
  root.replaceChildren();
  render(<App />, root);
}
