import { useState } from 'preact/hooks';
import { api, consolePath, get, post } from '../api';
import { ConfirmDialog, CopyButton, Field, LoadError, Notice, useAction, useLoad } from '../components';
import { formatTime } from '../logic/format';

/** What `GET /console/api/projects/{id}/shops` answers (lambdas/http/console-api.ts). */
interface Connection {
  connection_id: string;
  provider: string;
  products: Record<string, string>;
  created_at: number;
  receiver_url: string;
}

interface Receipt {
  receipt_id: string;
  at: number;
  connection_id: string;
  provider: string;
  event_id: string | null;
  order_id: string | null;
  result: string;
  detail: string;
  key_ids: string[];
  replayable: boolean;
}

const PROVIDERS = [
  ['sellauth', 'SellAuth'],
  ['sellapp', 'Sell.app'],
  ['sellix', 'Sellix'],
  ['stripe', 'Stripe'],
] as const;

/** `12345=30d,machines=1` lines as the mapping the API takes. */
function productsOf(text: string): Record<string, string> {
  const products: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const at = trimmed.indexOf('=');
    products[at < 0 ? trimmed : trimmed.slice(0, at)] = at < 0 ? '' : trimmed.slice(at + 1);
  }
  return products;
}

/**
 * The project's shops (DESIGN.md, "Shops deliver keys by themselves"): connections with the URL to paste into the
 * shop, a form to add one (the secret is sent once and never shown again), and the delivery log with replay.
 */
export function ShopsPage({ projectId }: { projectId: string }) {
  const path = consolePath(projectId, '/shops');
  const shops = useLoad(() => get<{ connections: Connection[]; receipts: Receipt[] }>(path), [projectId]);
  const [provider, setProvider] = useState('sellauth');
  const [secret, setSecret] = useState('');
  const [products, setProducts] = useState('');
  const [removing, setRemoving] = useState<Connection | null>(null);
  const action = useAction();

  const add = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const added = await post<{ connection_id: string; receiver_url: string }>(path, { provider, secret, products: productsOf(products) });
      return `Shop connected: paste ${added.receiver_url} into the shop as its webhook URL.`;
    });
    if (ok) {
      setSecret('');
      setProducts('');
      shops.reload();
    }
  };
  const remove = async (connection: Connection) => {
    setRemoving(null);
    const ok = await action.run(async () => {
      await api('DELETE', consolePath(projectId, `/shops/${encodeURIComponent(connection.connection_id)}`));
      return 'Shop removed: its receiver URL refuses every request now.';
    });
    if (ok) shops.reload();
  };
  const replay = async (receipt: Receipt) => {
    const ok = await action.run(async () => {
      const result = await post<{ result: string; detail: string }>(consolePath(projectId, `/shops/receipts/${encodeURIComponent(receipt.receipt_id)}/replay`));
      return `Replayed: ${result.result}. ${result.detail}`;
    });
    if (ok) shops.reload();
  };

  return (
    <>
      <h1 tabIndex={-1}>Shops</h1>
      <p>Shops that deliver this project's keys by themselves: each paid order gets its keys once, a refund or a dispute bans them.</p>
      {shops.error !== undefined && <LoadError error={shops.error} />}
      <Notice message={action.message} />
      {shops.data && (
        <>
          <h2>Connections</h2>
          {shops.data.connections.length === 0 ? (
            <p>No shop is connected yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Products</th>
                  <th scope="col">Receiver URL</th>
                  <th scope="col">Connected</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shops.data.connections.map((connection) => (
                  <tr key={connection.connection_id}>
                    <td>{connection.provider}</td>
                    <td>
                      {Object.entries(connection.products).map(([id, terms]) => (
                        <div key={id}>
                          <code>{id}</code> = {terms}
                        </div>
                      ))}
                    </td>
                    <td>
                      <code>{connection.receiver_url}</code> <CopyButton text={connection.receiver_url} label={`Copy URL of ${connection.connection_id}`} />
                    </td>
                    <td>{formatTime(connection.created_at)}</td>
                    <td>
                      <button type="button" class="danger" disabled={action.busy} onClick={() => setRemoving(connection)}>
                        Remove {connection.provider} shop
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Add shop</h2>
          <form onSubmit={add} class="grid-form">
            <Field label="Provider">
              {({ id }) => (
                <select id={id} value={provider} onChange={(event) => setProvider(event.currentTarget.value)}>
                  {PROVIDERS.map(([value, name]) => (
                    <option key={value} value={value}>
                      {name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Signing secret" hint="The shop's webhook secret; it is stored encrypted and never shown again">
              {({ id, describedBy }) => (
                <input
                  id={id}
                  type="password"
                  autoComplete="off"
                  value={secret}
                  aria-describedby={describedBy}
                  onInput={(event) => setSecret(event.currentTarget.value)}
                />
              )}
            </Field>
            <Field label="Products" hint="One a line: PRODUCT_ID=TERMS, e.g. 12345=30d,machines=1 (Stripe: the Price id)">
              {({ id, describedBy }) => (
                <textarea id={id} rows={3} value={products} aria-describedby={describedBy} onInput={(event) => setProducts(event.currentTarget.value)} />
              )}
            </Field>
            <div class="actions">
              <button type="submit" disabled={action.busy}>
                Connect shop
              </button>
            </div>
          </form>
          <h2>Delivery log</h2>
          {shops.data.receipts.length === 0 ? (
            <p>No order has arrived yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Order</th>
                  <th scope="col">Result</th>
                  <th scope="col">Keys</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shops.data.receipts.map((receipt) => (
                  <tr key={receipt.receipt_id}>
                    <td>{formatTime(receipt.at)}</td>
                    <td>{receipt.provider}</td>
                    <td>{receipt.order_id ?? '—'}</td>
                    <td>
                      {receipt.result}: {receipt.detail}
                    </td>
                    <td>{receipt.key_ids.length}</td>
                    <td>
                      {receipt.replayable && (
                        <button type="button" disabled={action.busy} onClick={() => replay(receipt)}>
                          Replay order {receipt.order_id ?? receipt.receipt_id}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove the ${removing.provider} shop?`}
          confirmLabel="Remove"
          onConfirm={() => remove(removing)}
          onCancel={() => setRemoving(null)}
        >
          <p>Its receiver URL stops delivering keys at once. Keys it delivered stay as they are.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
