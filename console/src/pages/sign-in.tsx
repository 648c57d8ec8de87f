import { useState } from 'preact/hooks';
import { api, messageOf } from '../api';

/** What `/console/api/session` answers about a live session. */
export interface Session {
  owner_id: string;
  scope: 'read' | 'write';
  /** The session's token's limits, present only when it has them: one project, named owner routes. */
  project_id?: string;
  routes?: string[];
}

/** Sign in with an API token (as sdapi uses); the server keeps the session, the page keeps nothing. */
export function SignInPage({ reason, onSignedIn }: { reason?: string | undefined; onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const session = await api<Session>('POST', '/session', { body: { token: token.trim() }, quietUnauthorized: true });
      setToken('');
      onSignedIn(session);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to the Script Distribution console</h1>
      {reason && <p class="notice info">{reason}</p>}
      <form onSubmit={submit}>
        <div class="field">
          <label for="api-token">API token</label>
          <input
            id="api-token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
            aria-describedby="api-token-hint"
          />
          <small id="api-token-hint" class="hint">
            A token that starts with sdt_: the one <code>npm start</code> printed, or one from <code>npm run dashboard -- token create</code>.
          </small>
        </div>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="notice error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
