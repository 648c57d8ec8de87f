import { useEffect, useRef, useState } from 'preact/hooks';
import type { KeyDetail as ServerKeyDetail } from '../../../lambdas/schemas/resources';
import { apiBase, consolePath, get, ownerPath, post } from '../api';
import { ConfirmDialog, CopyButton, downloadText, Field, LoadError, Notice, nowSeconds, useAction, useLoad } from '../components';
import { type IssuedKey, issuedKeysCsv, issuedKeysText } from '../logic/csv';
import { formatExpiry, formatMachines, formatUses, keyStatus } from '../logic/format';
import { DURATION_LABELS, DURATIONS, type IssueFormFields, validateIssueForm } from '../logic/forms';
import {
  FIRST_PAGE,
  hasPrevious,
  type KeyListState,
  nextPage,
  PAGE_SIZE,
  pageLabel,
  previousPage,
  queryKind,
  STATUS_FILTERS,
  type StatusFilter,
  searchParams,
  withQuery,
  withStatus,
} from '../logic/paging';
import { href } from '../logic/routes';

/**
 * The key detail the search route answers: the server's own type (its zod schema), imported as a type only, so
 * nothing of zod reaches the page's bundle and a field the server adds (`revoked_by`) is here at once.
 */
export type KeyDetail = ServerKeyDetail;

interface SearchAnswer {
  keys: KeyDetail[];
  offset: number;
  limit: number;
  next_offset?: number | null;
  has_more: boolean;
}

const STATUS_LABELS: Record<StatusFilter, string> = { all: 'All', active: 'Active', revoked: 'Revoked', expired: 'Expired' };
/** Typing pauses this long before the search runs: one request per word typed, not per keystroke. */
const SEARCH_PAUSE_MS = 250;

export function KeysPage({ projectId }: { projectId: string }) {
  const [state, setState] = useState<KeyListState>(FIRST_PAGE);
  const [typed, setTyped] = useState('');
  const keys = useLoad(
    () => get<SearchAnswer>(consolePath(projectId, `/keys/search?${searchParams(state)}`)),
    [projectId, state.query, state.status, state.offset],
  );
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction();

  // The search runs once typing pauses; Enter runs it at once.
  useEffect(() => {
    if (typed.trim() === state.query.trim()) return;
    const timer = setTimeout(() => setState((current) => withQuery(current, typed)), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed, state.query]);
  // A new list: nothing stays selected that is not on screen.
  useEffect(() => setSelected(new Set()), [projectId, state.query, state.status, state.offset]);

  const rows = keys.data?.keys ?? [];
  const now = nowSeconds();
  const toggle = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const allSelected = rows.length > 0 && rows.every((key) => selected.has(key.id));

  const revokeSelected = async () => {
    setConfirming(false);
    const ids = [...selected];
    await revoke.run(async () => {
      const answer = await post<{ revoked_count: number }>(consolePath(projectId, '/keys/revoke-selected'), { key_ids: ids });
      const revokedIds = new Set(ids);
      if (keys.data) keys.setData({ ...keys.data, keys: keys.data.keys.map((key) => (revokedIds.has(key.id) ? { ...key, revoked: 1 } : key)) });
      setSelected(new Set());
      return `Revoked ${answer.revoked_count} of the ${ids.length} selected keys${answer.revoked_count < ids.length ? ' (the others were revoked already)' : ''}.`;
    });
  };

  return (
    <>
      <h1 tabIndex={-1}>Keys</h1>
      <IssueKeys projectId={projectId} onIssued={keys.reload} />
      <section aria-labelledby="key-list-heading">
        <h2 id="key-list-heading">Find keys</h2>
        <form
          class="toolbar"
          onSubmit={(event) => {
            event.preventDefault();
            setState((current) => withQuery(current, typed));
          }}
        >
          <Field label="Search keys" hint="A key id, a watermark, a Discord ID or words of a note">
            {({ id, describedBy }) => (
              <input id={id} type="search" value={typed} aria-describedby={describedBy} onInput={(event) => setTyped(event.currentTarget.value)} />
            )}
          </Field>
          <Field label="Status">
            {({ id }) => (
              <select id={id} value={state.status} onChange={(event) => setState((current) => withStatus(current, event.currentTarget.value as StatusFilter))}>
                {STATUS_FILTERS.map((status) => (
                  <option key={status} value={status}>
                    {STATUS_LABELS[status]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <a class="button" href={`${apiBase()}${consolePath(projectId, '/keys/export.csv')}`} download onClick={(event) => exportAll(event, projectId)}>
            Export CSV
          </a>
        </form>
        <div class="toolbar">
          <button type="button" class="danger" disabled={selected.size === 0 || revoke.busy} onClick={() => setConfirming(true)}>
            Revoke selected
          </button>
          <span>{selected.size > 0 ? `${selected.size} selected` : 'Tick keys to revoke several at once'}</span>
        </div>
        <Notice message={revoke.message} />
        {confirming && (
          <ConfirmDialog title={`Revoke ${selected.size} keys?`} confirmLabel="Revoke" onConfirm={revokeSelected} onCancel={() => setConfirming(false)}>
            <p>Every check of these keys is refused from now on. A revoked key cannot be restored.</p>
          </ConfirmDialog>
        )}
        {keys.error !== undefined && <LoadError error={keys.error} />}
        <p role="status" class="muted">
          {keys.loading
            ? 'Loading keys…'
            : `${pageLabel(state, rows.length)}${state.query.trim() ? ` matching the ${queryKind(state.query)} “${state.query.trim()}”` : ''}${state.status !== 'all' ? `, ${STATUS_LABELS[state.status].toLowerCase()} only` : ''}`}
        </p>
        <div class="table-wrap">
          <table class="keys" aria-busy={keys.loading}>
            <caption class="visually-hidden">Keys of this project, {PAGE_SIZE} a page</caption>
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select every key on this page"
                    checked={allSelected}
                    disabled={rows.length === 0}
                    onChange={(event) => {
                      const on = event.currentTarget.checked;
                      setSelected(on ? new Set(rows.map((key) => key.id)) : new Set());
                    }}
                  />
                </th>
                <th scope="col">Key</th>
                <th scope="col">Watermark</th>
                <th scope="col">Status</th>
                <th scope="col">Uses</th>
                <th scope="col">Expires</th>
                <th scope="col">Machines</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((key) => (
                <tr key={key.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${key.id}`}
                      checked={selected.has(key.id)}
                      onChange={(event) => toggle(key.id, event.currentTarget.checked)}
                    />
                  </td>
                  <td>
                    <a href={href({ page: 'key', projectId, keyId: key.id })}>
                      <code>{key.id}</code>
                    </a>
                  </td>
                  <td>
                    <code>{key.watermark}</code>
                  </td>
                  <td>{keyStatus(key, now)}</td>
                  <td>{formatUses(key.current_uses, key.max_uses)}</td>
                  <td>{formatExpiry(key.expires_at)}</td>
                  <td>{formatMachines(key.fingerprints.length, key.max_fingerprints)}</td>
                  <td class="note">{key.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <nav class="pager" aria-label="Key pages">
          <button type="button" disabled={!hasPrevious(state) || keys.loading} onClick={() => setState((current) => previousPage(current))}>
            Previous
          </button>
          <button
            type="button"
            disabled={!keys.data?.has_more || keys.loading}
            onClick={() => keys.data && setState((current) => (keys.data ? nextPage(current, keys.data) : current))}
          >
            Next
          </button>
        </nav>
      </section>
    </>
  );
}

const EMPTY_ISSUE_FORM: IssueFormFields = { count: '1', duration: '30d', maxUses: '', maxMachines: '', note: '', discordId: '' };

/**
 * The CSV export comes in pages (the server reads a few thousand keys a request and names where the next page
 * starts): the page asks for each in turn and saves them as one file. The link's own download is the first page,
 * for a browser that runs no script.
 */
async function exportAll(event: Event, projectId: string): Promise<void> {
  event.preventDefault();
  const parts: string[] = [];
  for (let after: string | null = '0'; after !== null; ) {
    const response = await fetch(`${apiBase()}${consolePath(projectId, `/keys/export.csv?after=${after}`)}`, { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`The export stopped: the server answered ${response.status}`);
    parts.push(await response.text());
    after = response.headers.get(EXPORT_NEXT_HEADER);
  }
  downloadText(`keys-${projectId}.csv`, parts.join(''), 'text/csv;charset=utf-8');
}

/** Where the next page of the export starts (the server's EXPORT_NEXT_HEADER); absent on the last page. */
const EXPORT_NEXT_HEADER = 'X-Export-Next-After';

/** `Issue keys`: the form, then the raw keys of the answer, shown this once with `Copy` and `Download`. */
function IssueKeys({ projectId, onIssued }: { projectId: string; onIssued: () => void }) {
  const [open, setOpen] = useState(false);
  const [fields, setFields] = useState<IssueFormFields>(EMPTY_ISSUE_FORM);
  const [errors, setErrors] = useState<Partial<Record<keyof IssueFormFields, string>>>({});
  const [issued, setIssued] = useState<IssuedKey[] | null>(null);
  const action = useAction();
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const firstField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (issued) resultHeading.current?.focus();
  }, [issued]);
  useEffect(() => {
    if (open) firstField.current?.focus();
  }, [open]);

  const set = (name: keyof IssueFormFields) => (event: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setFields((current) => ({ ...current, [name]: event.currentTarget.value }));

  const submit = async (event: Event) => {
    event.preventDefault();
    const checked = validateIssueForm(fields);
    if (!checked.ok) {
      setErrors(checked.errors);
      action.setMessage({ kind: 'error', text: 'The form has mistakes: each is named beside its field.' });
      return;
    }
    setErrors({});
    await action.run(async () => {
      const answer = await post<{ keys: IssuedKey[] }>(ownerPath(projectId, '/keys'), checked.body);
      setIssued(answer.keys);
      setOpen(false);
      setFields(EMPTY_ISSUE_FORM);
      onIssued();
      return undefined;
    });
  };

  return (
    <section aria-labelledby="issue-heading" class="panel">
      <h2 id="issue-heading">Issue keys</h2>
      {issued && (
        <div class="issued">
          <h3 ref={resultHeading} tabIndex={-1}>
            {issued.length === 1 ? 'Your new key' : `Your ${issued.length} new keys`}
          </h3>
          <p>
            <strong>Save them now: they are shown this once.</strong> The service keeps only their hashes.
          </p>
          <textarea aria-label="New keys" readOnly rows={Math.min(10, issued.length + 1)} value={issuedKeysText(issued)} />
          <div class="actions">
            <CopyButton text={issuedKeysText(issued)} />
            <button type="button" onClick={() => downloadText(`keys-${projectId}.csv`, issuedKeysCsv(issued), 'text/csv')}>
              Download
            </button>
            <button type="button" onClick={() => setIssued(null)}>
              Done, hide them
            </button>
          </div>
        </div>
      )}
      {!open && (
        <button type="button" onClick={() => setOpen(true)}>
          Issue keys
        </button>
      )}
      {open && (
        <form onSubmit={submit} noValidate class="grid-form">
          <Field label="Count" error={errors.count}>
            {({ id, describedBy }) => (
              <input
                ref={firstField}
                id={id}
                inputMode="numeric"
                value={fields.count}
                onInput={set('count')}
                aria-describedby={describedBy}
                aria-invalid={!!errors.count}
              />
            )}
          </Field>
          <Field label="Duration" error={errors.duration}>
            {({ id, describedBy }) => (
              <select id={id} value={fields.duration} onChange={set('duration')} aria-describedby={describedBy}>
                {DURATIONS.map((duration) => (
                  <option key={duration} value={duration}>
                    {DURATION_LABELS[duration]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Max uses" hint="Blank: no cap" error={errors.maxUses}>
            {({ id, describedBy }) => (
              <input
                id={id}
                inputMode="numeric"
                value={fields.maxUses}
                onInput={set('maxUses')}
                aria-describedby={describedBy}
                aria-invalid={!!errors.maxUses}
              />
            )}
          </Field>
          <Field label="Max machines" hint="Blank: not bound to machines" error={errors.maxMachines}>
            {({ id, describedBy }) => (
              <input
                id={id}
                inputMode="numeric"
                value={fields.maxMachines}
                onInput={set('maxMachines')}
                aria-describedby={describedBy}
                aria-invalid={!!errors.maxMachines}
              />
            )}
          </Field>
          <Field label="Note" hint="Who the keys are for; searchable" error={errors.note}>
            {({ id, describedBy }) => <input id={id} value={fields.note} onInput={set('note')} aria-describedby={describedBy} aria-invalid={!!errors.note} />}
          </Field>
          <Field label="Discord ID" hint="The buyer's Discord user id, 17 to 20 digits" error={errors.discordId}>
            {({ id, describedBy }) => (
              <input
                id={id}
                inputMode="numeric"
                value={fields.discordId}
                onInput={set('discordId')}
                aria-describedby={describedBy}
                aria-invalid={!!errors.discordId}
              />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Issue keys
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <Notice message={action.message} />
    </section>
  );
}
