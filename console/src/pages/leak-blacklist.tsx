import { useState } from 'preact/hooks';
import { get, ownerPath, post } from '../api';
import { ConfirmDialog, Notice, useAction } from '../components';

interface KeyDetailView {
  discord_id: string | null;
  fingerprints: { fingerprint: string }[];
}

/**
 * After the Leak page revoked keys: offer to blacklist their buyers (the machines bound to the keys carrying the
 * leaked watermarks, and the Discord ids linked to them), the reason naming the watermark. Reads the keys only once
 * the owner confirmed.
 */
export function BlacklistLeakers({ projectId, watermarks }: { projectId: string; watermarks: readonly string[] }) {
  const [asking, setAsking] = useState(false);
  const [done, setDone] = useState(false);
  const action = useAction();

  const blacklist = () => {
    setAsking(false);
    return action.run(async () => {
      const buyers = new Map<string, Record<string, string>>();
      for (const watermark of watermarks) {
        const reason = `Leaked the script (WM_${watermark})`;
        const ids: string[] = [];
        for (let total = 1; ids.length < total; ) {
          const page = await get<{ keys: { id: string }[]; total: number }>(
            ownerPath(projectId, `/keys?watermark=${watermark}&limit=100&offset=${ids.length}`),
          );
          ids.push(...page.keys.map((key) => key.id));
          total = page.keys.length === 0 ? ids.length : page.total;
        }
        for (const id of ids) {
          const { key } = await get<{ key: KeyDetailView }>(ownerPath(projectId, `/keys/${encodeURIComponent(id)}`));
          for (const { fingerprint } of key.fingerprints) buyers.set(`f:${fingerprint}`, { fingerprint, reason });
          if (key.discord_id) buyers.set(`d:${key.discord_id}`, { discord_id: key.discord_id, reason });
        }
      }
      let banned = 0;
      for (const body of buyers.values()) banned += (await post<{ banned_keys: number }>(ownerPath(projectId, '/blacklist'), body)).banned_keys;
      setDone(true);
      return buyers.size === 0
        ? 'These keys name no machine and no Discord id: nobody to blacklist.'
        : `Blacklisted ${buyers.size} buyer${buyers.size === 1 ? '' : 's'}; ${banned} more key${banned === 1 ? '' : 's'} banned.`;
    });
  };

  return (
    <section aria-labelledby="blacklist-leakers-heading">
      <h2 id="blacklist-leakers-heading">Blacklist the buyers</h2>
      <p>The machines and Discord ids of these keys can be blacklisted, so the leaker gets no new key, binding or redeem.</p>
      {!done && (
        <button type="button" class="danger" disabled={action.busy} onClick={() => setAsking(true)}>
          Blacklist buyers
        </button>
      )}
      <Notice message={action.message} />
      {asking && (
        <ConfirmDialog title="Blacklist the buyers of these keys?" confirmLabel="Blacklist" onConfirm={blacklist} onCancel={() => setAsking(false)}>
          <p>Every machine bound to a key carrying these watermarks, and every Discord id linked to one, is blacklisted, and their other keys are banned.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
