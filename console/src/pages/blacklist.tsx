import { useState } from 'preact/hooks';
import { api, get, ownerPath, post } from '../api';
import { ConfirmDialog, Field, LoadError, Notice, useAction, useLoad } from '../components';
import { formatTime } from '../logic/format';

/** One entry as `GET …/blacklist` lists it: exactly one of the three names its buyer. */
interface BlacklistEntryView {
  id: string;
  fingerprint?: string;
  discord_id?: string;
  email_sha256?: string;
  reason: string;
  added_by: string;
  created_at: number;
}

const PAGE = 100;

type Kind = 'fingerprint' | 'discord_id' | 'email';

const KIND_LABELS: Record<Kind, string> = {
  fingerprint: 'Machine fingerprint (64 hex)',
  discord_id: 'Discord ID',
  email: 'Email address (hashed in this browser)',
};

const buyerOf = (entry: BlacklistEntryView): string =>
  entry.fingerprint !== undefined
    ? `Machine ${entry.fingerprint}`
    : entry.discord_id !== undefined
      ? `Discord ${entry.discord_id}`
      : `Email hash ${entry.email_sha256}`;

/** SHA-256 hex of the trimmed, lowercased address: the address itself never leaves the browser. */
async function emailSha256(email: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(email.trim().toLowerCase()));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The project's buyer blacklist: add a buyer with a reason (their keys are banned), list them, remove one. */
export function BlacklistPage({ projectId }: { projectId: string }) {
  const [offset, setOffset] = useState(0);
  const entries = useLoad(
    () => get<{ entries: BlacklistEntryView[]; total: number }>(ownerPath(projectId, `/blacklist?limit=${PAGE}&offset=${offset}`)),
    [projectId, offset],
  );
  const [kind, setKind] = useState<Kind>('fingerprint');
  const [buyer, setBuyer] = useState('');
  const [reason, setReason] = useState('');
  const [removing, setRemoving] = useState<BlacklistEntryView | null>(null);
  const action = useAction();

  const add = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const body = kind === 'email' ? { email_sha256: await emailSha256(buyer), reason } : { [kind]: buyer.trim(), reason };
      const answer = await post<{ id: string; banned_keys: number }>(ownerPath(projectId, '/blacklist'), body);
      setBuyer('');
      setReason('');
      return `Blacklisted as ${answer.id}; ${answer.banned_keys} key${answer.banned_keys === 1 ? '' : 's'} banned.`;
    });
    if (ok) entries.reload();
  };
  const remove = async (entry: BlacklistEntryView) => {
    setRemoving(null);
    const ok = await action.run(async () => {
      await api('DELETE', ownerPath(projectId, `/blacklist/${encodeURIComponent(entry.id)}`));
      return `Removed ${entry.id}. The keys it banned stay banned until you unban each.`;
    });
    if (ok) entries.reload();
  };

  const total = entries.data?.total ?? 0;
  return (
    <>
      <h1 tabIndex={-1}>Blacklist</h1>
      <p>
        A blacklisted buyer's keys are banned with the reason, and they get no new machine binding, Discord redeem or key. Removing an entry leaves those bans.
      </p>
      <section aria-labelledby="add-blacklist-heading" class="panel">
        <h2 id="add-blacklist-heading">Add to blacklist</h2>
        <form onSubmit={add} class="grid-form">
          <Field label="Kind">
            {({ id }) => (
              <select id={id} value={kind} onChange={(event) => setKind(event.currentTarget.value as Kind)}>
                {(Object.keys(KIND_LABELS) as Kind[]).map((name) => (
                  <option key={name} value={name}>
                    {KIND_LABELS[name]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Buyer">
            {({ id }) => <input id={id} value={buyer} required spellcheck={false} onInput={(event) => setBuyer(event.currentTarget.value)} />}
          </Field>
          <Field label="Reason" hint="What the buyer reads: 1 to 200 characters">
            {({ id, describedBy }) => (
              <input id={id} value={reason} required maxLength={200} aria-describedby={describedBy} onInput={(event) => setReason(event.currentTarget.value)} />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Add
            </button>
          </div>
        </form>
      </section>
      <Notice message={action.message} />
      {entries.error !== undefined && <LoadError error={entries.error} />}
      {entries.data?.entries.length === 0 && offset === 0 && <p>Nobody is blacklisted.</p>}
      {entries.data && entries.data.entries.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>
              Entries {offset + 1} to {offset + entries.data.entries.length} of {total}
            </caption>
            <thead>
              <tr>
                <th scope="col">Buyer</th>
                <th scope="col">Reason</th>
                <th scope="col">Added</th>
                <th scope="col">Remove</th>
              </tr>
            </thead>
            <tbody>
              {entries.data.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <code>{buyerOf(entry)}</code>
                  </td>
                  <td class="note">{entry.reason}</td>
                  <td>{formatTime(entry.created_at)}</td>
                  <td>
                    <button type="button" class="danger" disabled={action.busy} onClick={() => setRemoving(entry)} aria-label={`Remove ${entry.id}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="actions">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </div>
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.id} from the blacklist?`}
          confirmLabel="Remove"
          onConfirm={() => remove(removing)}
          onCancel={() => setRemoving(null)}
        >
          <p>The buyer may bind, redeem and get keys again. The keys this entry banned stay banned.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
