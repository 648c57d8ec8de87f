import { consolePath, get } from '../api';
import { LoadError, useLoad } from '../components';
import { auditRow } from '../logic/audit';
import { formatTime } from '../logic/format';

const LIMIT = 100;

export function AuditPage({ projectId }: { projectId: string }) {
  const entries = useLoad(
    () => get<{ entries: Record<string, unknown>[] }>(consolePath(projectId, `/audit?limit=${LIMIT}`)).then((answer) => answer.entries.map(auditRow)),
    [projectId],
  );
  return (
    <>
      <h1 tabIndex={-1}>Audit</h1>
      <p>Every change to this project, newest first (the last {LIMIT}).</p>
      {entries.error !== undefined && <LoadError error={entries.error} />}
      {entries.data?.length === 0 && <p>No change yet.</p>}
      {entries.data && entries.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Source</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
              </tr>
            </thead>
            <tbody>
              {entries.data.map((row) => (
                <tr key={row.id}>
                  <td>{formatTime(row.at)}</td>
                  <td>{row.action}</td>
                  <td>{row.source}</td>
                  <td>{row.who}</td>
                  <td class="note">{row.what}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
