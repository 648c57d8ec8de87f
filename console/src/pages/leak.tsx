import { useState } from 'preact/hooks';
import { api, consolePath, ownerPath, post } from '../api';
import { Field, Notice, useAction } from '../components';
import { formatCount } from '../logic/format';
import { BlacklistLeakers } from './leak-blacklist';

/** `complete` false: the bulk revoke stopped part-way (its audit entry says how far); revoking again finishes it. */
interface RevokeResult {
  watermark: string;
  revoked_count: number;
  complete?: boolean;
}

/** One watermark of the owner API's trace answer (`POST …/leak/trace`). */
interface Traced {
  watermark: string;
  mark: 'visible' | 'hidden';
  version_id: string | null;
  agreement: number | null;
  keys: { id: string; revoked: 0 | 1 }[];
}

/** A watermark as the page lists it: which marks named it, and its keys still active. */
interface Found {
  watermark: string;
  visible: boolean;
  /** The hidden mark's agreement, when it named the watermark. */
  agreement: number | null;
  active_keys: number;
}

/** The trace's answer, one row per watermark (a watermark both marks name is one row). */
function foundOf(traced: Traced[]): Found[] {
  const rows = new Map<string, Found>();
  for (const entry of traced) {
    const row = rows.get(entry.watermark) ?? {
      watermark: entry.watermark,
      visible: false,
      agreement: null,
      active_keys: entry.keys.filter((key) => key.revoked === 0).length,
    };
    if (entry.mark === 'visible') row.visible = true;
    else row.agreement = Math.max(row.agreement ?? 0, entry.agreement ?? 0);
    rows.set(entry.watermark, row);
  }
  return [...rows.values()];
}

/** What named a watermark, in words: the visible `WM_` marker, the hidden mark (with its agreement), or both. */
function namedBy(item: Found): string {
  const hidden = item.agreement === null ? [] : [`hidden mark (agreement ${item.agreement.toFixed(2)})`];
  return [...(item.visible ? ['WM_ marker'] : []), ...hidden].join(' and ');
}

/**
 * Paste or drop a leaked dump: its `WM_` markers and the hidden mark in its whitespace (read by the owner API's
 * trace, so obfuscated copies whose `--WM_` line was deleted are named too) name the keys that leaked it; `Revoke`
 * revokes them by watermark.
 */
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
      const answer = await api<{ found: Traced[] }>('POST', ownerPath(projectId, '/leak/trace'), { text });
      const rows = foundOf(answer.found);
      setFound(rows);
      return rows.length === 0
        ? 'No watermark of this project in that text: no WM_ marker (WM_ and 16 lowercase hex characters) and no hidden mark whose check holds. Nothing is guessed.'
        : `Found ${rows.length} watermark${rows.length === 1 ? '' : 's'}.`;
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
      <p>
        A leaked script dump carries the watermark of the key it was fetched with: after WM_, and hidden in the spaces between its tokens, which survives an
        obfuscated copy whose WM_ line was deleted. Paste the dump or choose its file.
      </p>
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
                <th scope="col">Named by</th>
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
                  <td>{namedBy(item)}</td>
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
