import { useState } from 'preact/hooks';
import { api, get, post } from '../api';
import { ConfirmDialog, CopyButton, Field, LoadError, Notice, useAction, useLoad } from '../components';
import { formatTime } from '../logic/format';

interface TokenView {
  token_id: string;
  scope: string;
  created_at: number;
}

export function TokensPage() {
  const tokens = useLoad(() => get<{ tokens: TokenView[] }>('/tokens').then((answer) => answer.tokens), []);
  const [scope, setScope] = useState('read');
  const [created, setCreated] = useState<{ token: string; token_id: string; scope: string } | null>(null);
  const [revoking, setRevoking] = useState<TokenView | null>(null);
  const action = useAction();

  const create = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      setCreated(await post<{ token: string; token_id: string; scope: string }>('/tokens', { scope }));
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

  return (
    <>
      <h1 tabIndex={-1}>Tokens</h1>
      <p>API tokens for sdapi, shops and bots (and for signing in here). A read token can look but not change.</p>
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
      {revoking && (
        <ConfirmDialog title={`Revoke token ${revoking.token_id}?`} confirmLabel="Revoke" onConfirm={() => revoke(revoking)} onCancel={() => setRevoking(null)}>
          <p>Everything using it stops at once, this console session too if it was opened with it.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
