import { useState } from 'preact/hooks';
import { api, get, post } from '../api';
import { ConfirmDialog, CopyButton, Field, LoadError, Notice, useAction, useLoad } from '../components';
import { formatLimits, formatTime } from '../logic/format';
import type { Project } from './projects';
import type { Session } from './sign-in';

interface TokenView {
  token_id: string;
  scope: string;
  created_at: number;
  project_id?: string;
  routes?: string[];
}

interface SessionView {
  session_id: string;
  token_id: string;
  opened_at: number;
  last_used_at: number;
}

/** `issue-keys, get-key` → the routes a new token asks for; empty: every route. */
const routeNames = (text: string): string[] =>
  text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

export function TokensPage({ session, projects }: { session: Session | null; projects: Project[] }) {
  const tokens = useLoad(() => get<{ tokens: TokenView[] }>('/tokens').then((answer) => answer.tokens), []);
  const sessions = useLoad(() => get<{ sessions: SessionView[] }>('/sessions').then((answer) => answer.sessions), []);
  const [scope, setScope] = useState('read');
  // A limited session makes tokens within its own limits only: the form starts from them.
  const [projectId, setProjectId] = useState(session?.project_id ?? '');
  const [routes, setRoutes] = useState(session?.routes?.join(', ') ?? '');
  const [created, setCreated] = useState<(TokenView & { token: string }) | null>(null);
  const [revoking, setRevoking] = useState<TokenView | null>(null);
  const action = useAction();

  const create = async (event: Event) => {
    event.preventDefault();
    const names = routeNames(routes);
    const ok = await action.run(async () => {
      setCreated(
        await post<TokenView & { token: string }>('/tokens', {
          scope,
          ...(projectId === '' ? {} : { project_id: projectId }),
          ...(names.length === 0 ? {} : { routes: names }),
        }),
      );
      return undefined;
    });
    if (ok) tokens.reload();
  };
  const revoke = async (token: TokenView) => {
    setRevoking(null);
    const ok = await action.run(async () => {
      await api('DELETE', `/tokens/${encodeURIComponent(token.token_id)}`);
      return `Token ${token.token_id} revoked: requests with it get 401, and console sessions opened with it end.`;
    });
    if (ok) tokens.reload();
  };

  const endSession = async (ended: SessionView) => {
    const ok = await action.run(async () => {
      await api('DELETE', `/sessions/${encodeURIComponent(ended.session_id)}`);
      return `Session ${ended.session_id} ended: it is signed out.`;
    });
    if (ok) sessions.reload();
  };

  return (
    <>
      <h1 tabIndex={-1}>Tokens</h1>
      <p>
        API tokens for sdapi, shops and bots (and for signing in here). A read token can look but not change; a token limited to a project or to named routes
        reaches nothing else, here as at the API.
      </p>
      <section aria-labelledby="create-token-heading" class="panel">
        <h2 id="create-token-heading">Create a token</h2>
        <form onSubmit={create} class="grid-form">
          <Field label="Scope">
            {({ id }) => (
              <select id={id} value={scope} onChange={(event) => setScope(event.currentTarget.value)}>
                <option value="read">read: look only</option>
                <option value="write">write: look and change</option>
              </select>
            )}
          </Field>
          <Field label="Project">
            {({ id }) => (
              <select id={id} value={projectId} onChange={(event) => setProjectId(event.currentTarget.value)}>
                {session?.project_id === undefined && <option value="">Every project</option>}
                {projects.map((project) => (
                  <option key={project.id} value={project.id}>
                    {project.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Routes" hint="Owner routes it may call, comma-separated (issue-keys for a shop); empty for every route.">
            {({ id, describedBy }) => <input id={id} aria-describedby={describedBy} value={routes} onInput={(event) => setRoutes(event.currentTarget.value)} />}
          </Field>
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Create token
            </button>
          </div>
        </form>
        {created && (
          <div class="issued">
            <p>
              <strong>Your new {created.scope} token, shown this once:</strong> the service keeps only its hash.
            </p>
            <input aria-label="New token" readOnly value={created.token} class="secret" />
            <div class="actions">
              <CopyButton text={created.token} />
              <button type="button" onClick={() => setCreated(null)}>
                Done, hide it
              </button>
            </div>
          </div>
        )}
      </section>
      <Notice message={action.message} />
      {tokens.error !== undefined && <LoadError error={tokens.error} />}
      {tokens.data && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Token id</th>
                <th scope="col">Scope</th>
                <th scope="col">Limits</th>
                <th scope="col">Created</th>
                <th scope="col">Revoke</th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((token) => (
                <tr key={token.token_id}>
                  <td>
                    <code>{token.token_id}</code>
                  </td>
                  <td>{token.scope}</td>
                  <td>{formatLimits(token) || 'none: every project and route'}</td>
                  <td>{formatTime(token.created_at)}</td>
                  <td>
                    <button type="button" class="danger" disabled={action.busy} onClick={() => setRevoking(token)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Console sessions</h2>
        <p>Where the console is signed in, by token (at most ten each: signing in again ends the oldest).</p>
        {sessions.error !== undefined && <LoadError error={sessions.error} />}
        {sessions.data && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Token id</th>
                  <th scope="col">Opened</th>
                  <th scope="col">Last used</th>
                  <th scope="col">End</th>
                </tr>
              </thead>
              <tbody>
                {sessions.data.map((listed) => (
                  <tr key={listed.session_id}>
                    <td>
                      <code>{listed.session_id}</code>
                    </td>
                    <td>
                      <code>{listed.token_id}</code>
                    </td>
                    <td>{formatTime(listed.opened_at)}</td>
                    <td>{formatTime(listed.last_used_at)}</td>
                    <td>
                      <button type="button" class="danger" disabled={action.busy} onClick={() => endSession(listed)}>
                        End session
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {revoking && (
        <ConfirmDialog title={`Revoke token ${revoking.token_id}?`} confirmLabel="Revoke" onConfirm={() => revoke(revoking)} onCancel={() => setRevoking(null)}>
          <p>Everything using it stops at once, this console session too if it was opened with it.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
