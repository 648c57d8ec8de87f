import { useState } from 'preact/hooks';
import { ApiError, api, consolePath, get } from '../api';
import { CopyButton, Field, LoadError, Notice, useAction, useLoad } from '../components';

interface DiscordLink {
  public_key: string | null;
  application_id: string | null;
  reset_cooldown: number | null;
  interactions_url: string | null;
}

export function LoaderPage({ projectId }: { projectId: string }) {
  const loader = useLoad(() => get<{ stub_url: string; line: string }>(consolePath(projectId, '/loader')), [projectId]);
  return (
    <>
      <h1 tabIndex={-1}>Loader</h1>
      <p>What to hand buyers: they put their key in the first line and run both in their executor.</p>
      {loader.error !== undefined && <LoadError error={loader.error} />}
      {loader.data && (
        <>
          <h2>What buyers run</h2>
          <pre class="code">{loader.data.line}</pre>
          <CopyButton text={loader.data.line} />
          <p>
            The stub loader is served at <code>{loader.data.stub_url}</code>: it checks the key and fetches the script stamped with that key's watermark.
          </p>
        </>
      )}
      <DiscordSettings projectId={projectId} />
    </>
  );
}

/** The project's Discord application link; hidden where the server has no such route (404). */
function DiscordSettings({ projectId }: { projectId: string }) {
  const path = consolePath(projectId, '/discord');
  const link = useLoad(async () => {
    try {
      return await get<DiscordLink>(path);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  }, [projectId]);
  const [fields, setFields] = useState<{ publicKey: string; applicationId: string; cooldown: string } | null>(null);
  const action = useAction();
  if (link.data === null || (link.loading && !link.data)) return null;
  const current = link.data;
  const shown = fields ?? {
    publicKey: current?.public_key ?? '',
    applicationId: current?.application_id ?? '',
    cooldown: String(current?.reset_cooldown ?? 86_400),
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      link.setData(
        await api<DiscordLink>('PUT', path, {
          body: {
            public_key: shown.publicKey.trim(),
            ...(shown.applicationId.trim() ? { application_id: shown.applicationId.trim() } : {}),
            reset_cooldown: Number(shown.cooldown),
          },
        }),
      );
      return 'Discord link saved: paste the interactions URL into your application in the Discord developer portal.';
    });
    if (ok) setFields(null);
  };
  const unlink = async () => {
    const ok = await action.run(async () => {
      await api('DELETE', path);
      return 'Discord unlinked: the interactions endpoint refuses every request now.';
    });
    if (ok) link.reload();
  };
  return (
    <section aria-labelledby="discord-heading" class="panel">
      <h2 id="discord-heading">Buyers in Discord</h2>
      {link.error !== undefined && <LoadError error={link.error} />}
      {current?.interactions_url && (
        <p>
          Interactions endpoint URL: <code>{current.interactions_url}</code> <CopyButton text={current.interactions_url} label="Copy URL" />
        </p>
      )}
      <form onSubmit={save} class="grid-form">
        <Field label="Public key" hint="The application's public key (64 hex), from Discord's developer portal">
          {({ id, describedBy }) => (
            <input
              id={id}
              value={shown.publicKey}
              aria-describedby={describedBy}
              onInput={(event) => setFields({ ...shown, publicKey: event.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Application ID">
          {({ id }) => (
            <input
              id={id}
              inputMode="numeric"
              value={shown.applicationId}
              onInput={(event) => setFields({ ...shown, applicationId: event.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Reset cooldown (seconds)" hint="How often a buyer may reset their machines: 3,600 to 2,592,000">
          {({ id, describedBy }) => (
            <input
              id={id}
              inputMode="numeric"
              value={shown.cooldown}
              aria-describedby={describedBy}
              onInput={(event) => setFields({ ...shown, cooldown: event.currentTarget.value })}
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Save Discord link
          </button>
          {current?.public_key && (
            <button type="button" class="danger" disabled={action.busy} onClick={unlink}>
              Unlink Discord
            </button>
          )}
        </div>
      </form>
      <Notice message={action.message} />
    </section>
  );
}
