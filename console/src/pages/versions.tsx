import { useState } from 'preact/hooks';
import { ApiError, consolePath, get, ownerPath, post } from '../api';
import { ConfirmDialog, Field, LoadError, Notice, useAction, useLoad } from '../components';
import { formatBytes, formatCount, formatTime } from '../logic/format';
import { hex, scriptFileProblem } from '../logic/forms';

interface Version {
  id: string;
  version_number: number;
  uploaded_at: number;
  size_bytes: number;
  notes: string;
}

interface Upload {
  upload_id: string;
  url: string;
  headers: Record<string, string>;
}

export function VersionsPage({ projectId }: { projectId: string }) {
  const versions = useLoad(() => get<{ versions: Version[]; current_version_id: string | null }>(ownerPath(projectId, '/versions')), [projectId]);
  const [rollbackTo, setRollbackTo] = useState<Version | null>(null);
  const action = useAction();
  const list = [...(versions.data?.versions ?? [])].sort((a, b) => b.version_number - a.version_number);

  const rollback = async (version: Version) => {
    setRollbackTo(null);
    const ok = await action.run(async () => {
      await post(ownerPath(projectId, '/versions/rollback'), { version_id: version.id });
      return `Version ${version.version_number} is current: every later script fetch serves it.`;
    });
    if (ok) versions.reload();
  };

  return (
    <>
      <h1 tabIndex={-1}>Versions</h1>
      <UploadForm projectId={projectId} onUploaded={versions.reload} />
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Uploaded versions, newest first</h2>
        <Notice message={action.message} />
        {versions.error !== undefined && <LoadError error={versions.error} />}
        {versions.data && list.length === 0 && <p>No version yet: upload the script above.</p>}
        {list.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Uploaded</th>
                  <th scope="col">Size</th>
                  <th scope="col">Notes</th>
                  <th scope="col">Current</th>
                </tr>
              </thead>
              <tbody>
                {list.map((version) => (
                  <tr key={version.id}>
                    <td>v{version.version_number}</td>
                    <td>{formatTime(version.uploaded_at)}</td>
                    <td>{formatBytes(version.size_bytes)}</td>
                    <td class="note">{version.notes}</td>
                    <td>
                      {version.id === versions.data?.current_version_id ? (
                        <strong class="badge">Current</strong>
                      ) : (
                        <button type="button" disabled={action.busy} onClick={() => setRollbackTo(version)}>
                          Roll back
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {rollbackTo && (
          <ConfirmDialog
            title={`Roll back to version ${rollbackTo.version_number}?`}
            confirmLabel="Roll back"
            onConfirm={() => rollback(rollbackTo)}
            onCancel={() => setRollbackTo(null)}
          >
            <p>Every buyer's next script fetch gets version {rollbackTo.version_number} instead of the current one.</p>
          </ConfirmDialog>
        )}
      </section>
    </>
  );
}

/**
 * Upload: the file goes straight to storage (a presigned PUT, so no 6 MB request limit of a Lambda is in the way),
 * then a commit makes it a version after the server checked it; a bad file is named and leaves nothing behind.
 */
/** The upload's hidden mark in words: how many places it has, and what "weak" asks of the publisher. */
function hiddenMarkSentence(mark: { positions: number; weak: boolean }): string {
  const places = `${formatCount(mark.positions)} place${mark.positions === 1 ? '' : 's'}`;
  return mark.weak
    ? `Hidden mark: weak (${places}): a leaked copy whose WM_ line was deleted, or a part of one, may not name its buyer (docs: script delivery, the hidden mark).`
    : `Hidden mark: ${places}, enough for any half of a leaked copy to name its buyer.`;
}

function UploadForm({ projectId, onUploaded }: { projectId: string; onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [notes, setNotes] = useState('');
  const [fileError, setFileError] = useState<string | undefined>();
  const [formKey, setFormKey] = useState(0);
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) {
      setFileError('Choose the script file to upload');
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const problem = scriptFileProblem(bytes);
    setFileError(problem ?? undefined);
    if (problem) {
      action.setMessage({ kind: 'error', text: problem });
      return;
    }
    const ok = await action.run(async () => {
      const sha256 = hex(await crypto.subtle.digest('SHA-256', bytes));
      const upload = await post<Upload>(consolePath(projectId, '/versions/uploads'), { size_bytes: bytes.byteLength, sha256, ...(notes ? { notes } : {}) });
      let put: Response;
      try {
        put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes, credentials: 'same-origin' });
      } catch {
        throw new ApiError(0, 'The script file could not be sent to storage: check the connection and upload again');
      }
      if (!put.ok) throw new ApiError(put.status, `Storage refused the script file (${put.status}): upload it again`);
      const version = await post<{ version_number: number; hidden_mark: { positions: number; weak: boolean } }>(
        consolePath(projectId, `/versions/uploads/${encodeURIComponent(upload.upload_id)}/commit`),
      );
      return `Uploaded version ${version.version_number}: it is current now, and version_deployed goes to your webhooks. ${hiddenMarkSentence(version.hidden_mark)}`;
    });
    if (ok) {
      setFile(null);
      setNotes('');
      setFormKey((value) => value + 1);
      onUploaded();
    }
  };

  return (
    <section aria-labelledby="upload-heading" class="panel">
      <h2 id="upload-heading">Upload a new version</h2>
      <form key={formKey} onSubmit={submit} class="grid-form" noValidate>
        <Field label="Script file" hint="The script itself: 1 byte to 5 MiB of UTF-8 text" error={fileError}>
          {({ id, describedBy }) => (
            <input
              id={id}
              type="file"
              accept=".lua,.luau,.txt,text/plain"
              aria-describedby={describedBy}
              aria-invalid={!!fileError}
              onChange={(event) => {
                setFile(event.currentTarget.files?.[0] ?? null);
                setFileError(undefined);
              }}
            />
          )}
        </Field>
        <Field label="Notes" hint="Shown in the version_deployed embed; may be empty">
          {({ id, describedBy }) => <input id={id} value={notes} onInput={(event) => setNotes(event.currentTarget.value)} aria-describedby={describedBy} />}
        </Field>
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Upload
          </button>
        </div>
      </form>
      <Notice message={action.message} />
    </section>
  );
}
