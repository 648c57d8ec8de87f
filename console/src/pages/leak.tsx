import { useState } from 'preact/hooks';
import { consolePath, post } from '../api';
import { Field, Notice, useAction } from '../components';
import { formatCount } from '../logic/format';
import { BlacklistLeakers } from './leak-blacklist';

/** `complete` false: the bulk revoke stopped part-way (its audit entry says how far); revoking again finishes it. */
interface RevokeResult {
  watermark: string;
  revoked_count: number;
  complete?: boolean;
}

interface Found {
  watermark: string;
  active_keys: number;
}

/** Paste or drop a leaked dump: its `WM_` markers name the keys that leaked it; `Revoke` revokes them by watermark. */
export function LeakPage({ projectId }: { projectId: string }) {
  const [text, setText] = useState('');
  const [found, setFound] = useState<Found[] | null>(null);
  const [revoked, setRevoked] = useState<RevokeResult[] | null>(null);
  const action = useAction();

  const readFile = async (file: File | undefined) => {
    if (!file) return;
    setText(await file.text());
    setFound(null);
    setRevoked(null);
  };
  const find = (event: Event) => {
    event.preventDefault();
    setRevoked(null);
    return action.run(async () => {
      const answer = await post<{ watermarks: Found[] }>(consolePath(projectId, '/leak/find'), { text });
      setFound(answer.watermarks);
      return answer.watermarks.length === 0
        ? 'No watermark of this project in that text: only WM_ followed by 16 lowercase hex characters counts, and nothing is guessed.'
        : `Found ${answer.watermarks.length} watermark${answer.watermarks.length === 1 ? '' : 's'}.`;
    });
  };
  const revoke = () =>
    action.run(async () => {
      const watermarks = (found ?? []).map((item) => item.watermark);
      const answer = await post<{ results: RevokeResult[] }>(consolePath(projectId, '/leak/revoke'), { watermarks });
      setRevoked(answer.results);
      const finished = new Set(answer.results.filter((result) => result.complete !== false).map((result) => result.watermark));
      setFound((current) => current?.map((item) => (finished.has(item.watermark) ? { ...item, active_keys: 0 } : item)) ?? null);
      const total = answer.results.reduce((sum, result) => sum + result.revoked_count, 0);
      const unfinished = answer.results.filter((result) => result.complete === false).map((result) => result.watermark);
      return `Revoked ${formatCount(total)} key${total === 1 ? '' : 's'}.${unfinished.length > 0 ? ` Not finished for ${unfinished.join(', ')}: find keys and revoke again.` : ''}`;
    });

  return (
    <>
      <h1 tabIndex={-1}>Leak</h1>
      <p>A leaked script dump carries the watermark of the key it was fetched with, after WM_. Paste the dump or choose its file.</p>
      <form onSubmit={find} class="stack">
        <Field label="Leaked dump">
          {({ id }) => <textarea id={id} rows={10} value={text} spellcheck={false} onInput={(event) => setText(event.currentTarget.value)} />}
        </Field>
        <Field label="Dump file" hint="Or choose the dump's file: its text goes in the box above">
          {({ id, describedBy }) => <input id={id} type="file" aria-describedby={describedBy} onChange={(event) => readFile(event.currentTarget.files?.[0])} />}
        </Field>
        <div class="actions">
          <button type="submit" disabled={action.busy || text.trim() === ''}>
            Find keys
          </button>
        </div>
      </form>
      <Notice message={action.message} />
      {found && found.length > 0 && (
        <section aria-labelledby="found-heading">
          <h2 id="found-heading">Watermarks in the dump</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Watermark</th>
                <th scope="col">Active keys</th>
                {revoked && <th scope="col">Revoked</th>}
              </tr>
            </thead>
            <tbody>
              {found.map((item) => (
                <tr key={item.watermark}>
                  <td>
                    <code>{item.watermark}</code>
                  </td>
                  <td>{formatCount(item.active_keys)}</td>
                  {revoked && <td>{formatCount(revoked.find((result) => result.watermark === item.watermark)?.revoked_count ?? 0)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
          {!revoked && (
            <button type="button" class="danger" disabled={action.busy} onClick={revoke}>
              Revoke
            </button>
          )}
        </section>
      )}
      {revoked && revoked.length > 0 && <BlacklistLeakers projectId={projectId} watermarks={revoked.map((result) => result.watermark)} />}
    </>
  );
}
