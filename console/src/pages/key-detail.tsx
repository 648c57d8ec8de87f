import { useState } from 'preact/hooks';
import { api, get, ownerPath, post } from '../api';
import { ConfirmDialog, Field, LoadError, Notice, nowSeconds, useAction, useLoad } from '../components';
import { formatExpiry, formatMachines, formatTime, formatUses, keyStatus, shortFingerprint } from '../logic/format';
import { banReasonProblem, DURATION_LABELS, DURATIONS, type EditKeyFields, validateEditKeyForm } from '../logic/forms';
import { href } from '../logic/routes';
import type { KeyDetail } from './keys';

type Confirm = 'reset' | 'revoke' | null;

export function KeyDetailPage({ projectId, keyId }: { projectId: string; keyId: string }) {
  const key = useLoad(
    () => get<{ key: KeyDetail }>(ownerPath(projectId, `/keys/${encodeURIComponent(keyId)}`)).then((answer) => answer.key),
    [projectId, keyId],
  );
  const [confirm, setConfirm] = useState<Confirm>(null);
  const action = useAction();

  const act = async (kind: Exclude<Confirm, null>) => {
    setConfirm(null);
    const ok = await action.run(async () => {
      if (kind === 'reset') {
        const answer = await post<{ cleared: number }>(ownerPath(projectId, '/keys/reset-hwid'), { key_id: keyId });
        return `Machines reset: ${answer.cleared} unbound. The next checks bind anew.`;
      }
      await post(ownerPath(projectId, '/keys/revoke'), { key_id: keyId });
      return 'Key revoked: every check of it is refused from now on.';
    });
    if (ok) key.reload();
  };

  const detail = key.data;
  const status = detail ? keyStatus(detail, nowSeconds()) : undefined;
  return (
    <>
      <p>
        <a href={href({ page: 'keys', projectId })}>← All keys</a>
      </p>
      <h1 tabIndex={-1}>
        Key <code>{keyId}</code>
      </h1>
      {key.error !== undefined && <LoadError error={key.error} />}
      {key.loading && !detail && <p>Loading the key…</p>}
      <Notice message={action.message} />
      {detail && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd>{status}</dd>
            {detail.revoked_by !== null && (
              <>
                <dt>Revoked by</dt>
                <dd>
                  <code>{detail.revoked_by}</code>
                </dd>
              </>
            )}
            <dt>Watermark</dt>
            <dd>
              <code>{detail.watermark}</code>
            </dd>
            <dt>Tier</dt>
            <dd>{detail.tier}</dd>
            <dt>Issued</dt>
            <dd>{formatTime(detail.issued_at)}</dd>
            <dt>Expires</dt>
            <dd>{formatExpiry(detail.expires_at)}</dd>
            <dt>Uses</dt>
            <dd>{formatUses(detail.current_uses, detail.max_uses)}</dd>
            <dt>Machines</dt>
            <dd>{formatMachines(detail.fingerprints.length, detail.max_fingerprints)}</dd>
            <dt>Last check</dt>
            <dd>{formatTime(detail.last_check_at)}</dd>
            <dt>Note</dt>
            <dd class="note">{detail.note ?? '—'}</dd>
            <dt>Discord ID</dt>
            <dd>{detail.discord_id ?? '—'}</dd>
            <dt>User hash</dt>
            <dd>
              <code>{detail.user_hash}</code>
            </dd>
            {detail.ban !== undefined && (
              <>
                <dt>Ban</dt>
                <dd>
                  {detail.ban
                    ? `${detail.ban.reason} (${detail.ban.until === null ? 'until unbanned' : `until ${formatTime(detail.ban.until)}`})`
                    : 'Not banned'}
                </dd>
              </>
            )}
          </dl>
          <section aria-labelledby="machines-heading">
            <h2 id="machines-heading">Machines</h2>
            {detail.fingerprints.length === 0 ? (
              <p>No machine is bound{detail.max_fingerprints === null ? ': this key is not bound to machines.' : ' yet.'}</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Machine fingerprint</th>
                    <th scope="col">Bound</th>
                  </tr>
                </thead>
                <tbody>
                  {detail.fingerprints.map((machine) => (
                    <tr key={machine.fingerprint}>
                      <td>
                        <code title={machine.fingerprint}>{shortFingerprint(machine.fingerprint)}</code>
                      </td>
                      <td>{formatTime(machine.bound_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="actions-heading" class="panel">
            <h2 id="actions-heading">Actions</h2>
            <div class="actions">
              <button type="button" disabled={action.busy} onClick={() => setConfirm('reset')}>
                Reset machines
              </button>
              {detail.revoked === 0 && (
                <button type="button" class="danger" disabled={action.busy} onClick={() => setConfirm('revoke')}>
                  Revoke
                </button>
              )}
            </div>
            {confirm === 'reset' && (
              <ConfirmDialog title="Reset this key's machines?" confirmLabel="Reset machines" onConfirm={() => act('reset')} onCancel={() => setConfirm(null)}>
                <p>Every bound machine is unbound; the next checks bind anew.</p>
              </ConfirmDialog>
            )}
            {confirm === 'revoke' && (
              <ConfirmDialog title="Revoke this key?" confirmLabel="Revoke" onConfirm={() => act('revoke')} onCancel={() => setConfirm(null)}>
                <p>Every check of this key is refused from now on. A revoked key cannot be restored.</p>
              </ConfirmDialog>
            )}
          </section>
          <Lifecycle projectId={projectId} detail={detail} onChanged={key.setData} onReload={key.reload} />
        </>
      )}
    </>
  );
}

/** Ban, unban, extend and edit (DESIGN.md "Key lifecycle"), through the owner routes the console mirrors. */
function Lifecycle({
  projectId,
  detail,
  onChanged,
  onReload,
}: {
  projectId: string;
  detail: KeyDetail;
  onChanged: (key: KeyDetail) => void;
  onReload: () => void;
}) {
  const action = useAction();
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | undefined>();
  const [until, setUntil] = useState('');
  const [duration, setDuration] = useState<string>('30d');
  const [edit, setEdit] = useState<EditKeyFields>(() => ({
    note: detail.note ?? '',
    discordId: detail.discord_id ?? '',
    maxUses: detail.max_uses === null ? '' : String(detail.max_uses),
    maxMachines: detail.max_fingerprints === null ? '' : String(detail.max_fingerprints),
  }));
  const [editErrors, setEditErrors] = useState<Partial<Record<keyof EditKeyFields, string>>>({});
  const keyId = detail.id;

  const ban = async (event: Event) => {
    event.preventDefault();
    const problem = banReasonProblem(reason);
    setReasonError(problem ?? undefined);
    if (problem) return;
    const untilSeconds = until === '' ? undefined : Math.floor(new Date(`${until}Z`).getTime() / 1000);
    const ok = await action.run(async () => {
      await post(ownerPath(projectId, '/keys/ban'), { key_id: keyId, reason, ...(untilSeconds ? { until: untilSeconds } : {}) });
      return 'Key banned: its checks are refused with your reason until it is unbanned.';
    });
    if (ok) {
      setReason('');
      onReload();
    }
  };
  const unban = async () => {
    const ok = await action.run(async () => {
      await post(ownerPath(projectId, '/keys/unban'), { key_id: keyId });
      return 'Key unbanned.';
    });
    if (ok) onReload();
  };
  const extend = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const answer = await post<{ expires_at: number }>(ownerPath(projectId, '/keys/extend'), { key_id: keyId, duration });
      return `Key extended: it now expires ${formatExpiry(answer.expires_at)}.`;
    });
    if (ok) onReload();
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const checked = validateEditKeyForm(edit);
    if (!checked.ok) {
      setEditErrors(checked.errors);
      return;
    }
    setEditErrors({});
    await action.run(async () => {
      const answer = await api<{ key: KeyDetail } | KeyDetail>('PATCH', ownerPath(projectId, `/keys/${encodeURIComponent(keyId)}`), { body: checked.body });
      onChanged('key' in answer ? answer.key : answer);
      return 'Key saved.';
    });
  };
  const setEditField = (name: keyof EditKeyFields) => (event: { currentTarget: HTMLInputElement }) =>
    setEdit((current) => ({ ...current, [name]: event.currentTarget.value }));

  return (
    <section aria-labelledby="lifecycle-heading" class="panel">
      <h2 id="lifecycle-heading">Ban, extend, edit</h2>
      <Notice message={action.message} />
      {detail.ban ? (
        <button type="button" disabled={action.busy} onClick={unban}>
          Unban
        </button>
      ) : (
        <form onSubmit={ban} class="grid-form" noValidate>
          <Field label="Ban reason" hint="1 to 200 characters; the buyer sees it" error={reasonError}>
            {({ id, describedBy }) => <input id={id} value={reason} onInput={(event) => setReason(event.currentTarget.value)} aria-describedby={describedBy} />}
          </Field>
          <Field label="Ban until" hint="UTC; blank bans until you unban">
            {({ id, describedBy }) => (
              <input id={id} type="datetime-local" value={until} onInput={(event) => setUntil(event.currentTarget.value)} aria-describedby={describedBy} />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Ban
            </button>
          </div>
        </form>
      )}
      <form onSubmit={extend} class="grid-form">
        <Field label="Extend by">
          {({ id }) => (
            <select id={id} value={duration} onChange={(event) => setDuration(event.currentTarget.value)}>
              {DURATIONS.map((value) => (
                <option key={value} value={value}>
                  {DURATION_LABELS[value]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Extend
          </button>
        </div>
      </form>
      <form onSubmit={save} class="grid-form" noValidate>
        <Field label="Note" error={editErrors.note}>
          {({ id, describedBy }) => <input id={id} value={edit.note} onInput={setEditField('note')} aria-describedby={describedBy} />}
        </Field>
        <Field label="Discord ID" error={editErrors.discordId}>
          {({ id, describedBy }) => (
            <input id={id} inputMode="numeric" value={edit.discordId} onInput={setEditField('discordId')} aria-describedby={describedBy} />
          )}
        </Field>
        <Field label="Max uses" hint="Blank: no cap" error={editErrors.maxUses}>
          {({ id, describedBy }) => <input id={id} inputMode="numeric" value={edit.maxUses} onInput={setEditField('maxUses')} aria-describedby={describedBy} />}
        </Field>
        <Field label="Max machines" hint="Blank: not bound" error={editErrors.maxMachines}>
          {({ id, describedBy }) => (
            <input id={id} inputMode="numeric" value={edit.maxMachines} onInput={setEditField('maxMachines')} aria-describedby={describedBy} />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Save changes
          </button>
        </div>
      </form>
    </section>
  );
}
