import { useState } from 'preact/hooks';
import { api, consolePath, get, post } from '../api';
import { ConfirmDialog, Field, LoadError, Notice, useAction, useLoad } from '../components';

/** Spec §6.1: the events a webhook can subscribe to, each its own checkbox named by the event. */
const EVENTS = ['execution_drop', 'new_executor', 'key_abuse', 'version_deployed', 'clone_detected'] as const;

interface WebhookView {
  id: string;
  url_hint: string;
  events: string[];
  enabled: boolean | number;
}

function EventBoxes({ chosen, onChange }: { chosen: ReadonlySet<string>; onChange: (next: Set<string>) => void }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {EVENTS.map((event) => (
        <label key={event} class="check">
          <input
            type="checkbox"
            checked={chosen.has(event)}
            onChange={(change) => {
              const next = new Set(chosen);
              if (change.currentTarget.checked) next.add(event);
              else next.delete(event);
              onChange(next);
            }}
          />
          {event}
        </label>
      ))}
    </fieldset>
  );
}

export function WebhooksPage({ projectId }: { projectId: string }) {
  const webhooks = useLoad(() => get<{ webhooks: WebhookView[] }>(consolePath(projectId, '/webhooks')).then((answer) => answer.webhooks), [projectId]);
  const [adding, setAdding] = useState(false);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<ReadonlySet<string>>(new Set(EVENTS));
  const [enabled, setEnabled] = useState(true);
  const [editing, setEditing] = useState<{ id: string; events: ReadonlySet<string> } | null>(null);
  const [deleting, setDeleting] = useState<WebhookView | null>(null);
  const action = useAction();
  const path = (id: string, rest = '') => consolePath(projectId, `/webhooks/${encodeURIComponent(id)}${rest}`);

  const add = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      await post(consolePath(projectId, '/webhooks'), { url: url.trim(), events: [...events], enabled });
      return 'Webhook added.';
    });
    if (ok) {
      setAdding(false);
      setUrl('');
      setEvents(new Set(EVENTS));
      setEnabled(true);
      webhooks.reload();
    }
  };
  const change = async (id: string, body: { events?: string[]; enabled?: boolean }, done: string) => {
    const ok = await action.run(async () => {
      await api('PATCH', path(id), { body });
      return done;
    });
    if (ok) {
      setEditing(null);
      webhooks.reload();
    }
  };
  const remove = async (webhook: WebhookView) => {
    setDeleting(null);
    const ok = await action.run(async () => {
      await api('DELETE', path(webhook.id));
      return 'Webhook deleted.';
    });
    if (ok) webhooks.reload();
  };
  const test = (webhook: WebhookView) =>
    action.run(async () => {
      await post(path(webhook.id, '/test'));
      return `Test embed sent to ${webhook.url_hint}.`;
    });

  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p>Each webhook posts an embed to a Discord channel when one of its events happens.</p>
      <Notice message={action.message} />
      {webhooks.error !== undefined && <LoadError error={webhooks.error} />}
      {webhooks.data?.length === 0 && <p>No webhook yet.</p>}
      {webhooks.data && webhooks.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Enabled</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data.map((webhook) => {
                const on = webhook.enabled === true || webhook.enabled === 1;
                return (
                  <tr key={webhook.id}>
                    <td>
                      <code>{webhook.url_hint}</code>
                    </td>
                    <td>
                      {editing?.id === webhook.id ? (
                        <form
                          onSubmit={(event) => {
                            event.preventDefault();
                            change(webhook.id, { events: [...editing.events] }, 'Events saved.');
                          }}
                        >
                          <EventBoxes chosen={editing.events} onChange={(next) => setEditing({ id: webhook.id, events: next })} />
                          <div class="actions">
                            <button type="submit" disabled={action.busy}>
                              Save events
                            </button>
                            <button type="button" onClick={() => setEditing(null)}>
                              Cancel
                            </button>
                          </div>
                        </form>
                      ) : (
                        webhook.events.join(', ') || 'none'
                      )}
                    </td>
                    <td>{on ? 'Enabled' : 'Disabled'}</td>
                    <td class="actions">
                      <button type="button" disabled={action.busy} onClick={() => setEditing({ id: webhook.id, events: new Set(webhook.events) })}>
                        Edit
                      </button>
                      <button
                        type="button"
                        disabled={action.busy}
                        onClick={() => change(webhook.id, { enabled: !on }, on ? 'Webhook disabled.' : 'Webhook enabled.')}
                      >
                        {on ? 'Disable' : 'Enable'}
                      </button>
                      <button type="button" disabled={action.busy} onClick={() => test(webhook)}>
                        Send test
                      </button>
                      <button type="button" class="danger" disabled={action.busy} onClick={() => setDeleting(webhook)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {deleting && (
        <ConfirmDialog title="Delete this webhook?" confirmLabel="Delete" onConfirm={() => remove(deleting)} onCancel={() => setDeleting(null)}>
          <p>
            <code>{deleting.url_hint}</code> gets no more embeds. Add it again to undo.
          </p>
        </ConfirmDialog>
      )}
      <section aria-labelledby="add-webhook-heading" class="panel">
        <h2 id="add-webhook-heading">New webhook</h2>
        {!adding ? (
          <button type="button" onClick={() => setAdding(true)}>
            Add webhook
          </button>
        ) : (
          <form onSubmit={add} class="grid-form">
            <Field label="Webhook URL" hint="From the Discord channel's Integrations → Webhooks → Copy Webhook URL">
              {({ id, describedBy }) => (
                <input id={id} type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} aria-describedby={describedBy} />
              )}
            </Field>
            <EventBoxes chosen={events} onChange={setEvents} />
            <label class="check">
              <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} />
              Enabled
            </label>
            <div class="actions">
              <button type="submit" disabled={action.busy}>
                Add webhook
              </button>
              <button type="button" onClick={() => setAdding(false)}>
                Cancel
              </button>
            </div>
          </form>
        )}
      </section>
    </>
  );
}
