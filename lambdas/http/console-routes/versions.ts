import { AUDIT_ACTIONS } from '#domain/audit';
import { InvalidInput } from '#domain/errors';
import { newId } from '#domain/ids';
import type { PendingUpload } from '#domain/ports';
import { publishScript, scriptFileProblem, sha256Hex } from '#domain/scripts';
import { UploadBody } from '#schemas/console';
import { defineConsoleRoute, json, recordChange, write } from '../console-route';

/**
 * A version uploaded from the browser: announced (size, SHA-256, notes), PUT to a staged URL, then committed under
 * the rules of `versions upload` (#domain/scripts).
 */

export const startUpload = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/versions/uploads',
  need: write('uploading a version'),
  body: UploadBody,
  run: async ({ project, body, now, stores, deps }) => {
    const upload: PendingUpload = {
      uploadId: newId('ver').replace(/^ver_/, 'upl_'),
      projectId: project.id,
      sizeBytes: body.size_bytes,
      sha256: body.sha256,
      notes: body.notes,
      createdAt: now,
    };
    await stores.uploads.save(upload);
    const { url, headers } = await deps.staging.presign(upload);
    return json({ upload_id: upload.uploadId, url, headers });
  },
});

/**
 * The staged bytes become a version: exactly the size and SHA-256 announced, 1 byte to 5 MiB of UTF-8. A bad file is
 * a 400 naming why, and nothing stays: the staged object and the pending upload are deleted either way.
 */
export const commitUpload = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/versions/uploads/{upload_id}/commit',
  need: write('uploading a version'),
  run: async (context) => {
    const { project, params, now, stores, deps } = context;
    const uploadId = params.upload_id ?? '';
    const upload = await stores.uploads.find(project.id, uploadId);
    if (!upload) throw new InvalidInput(`Upload ${uploadId} not found in this project (it expires an hour after it starts): upload the file again`);
    try {
      const bytes = await deps.staging.read(upload);
      if (!bytes) throw new InvalidInput('No file arrived for this upload: PUT the file to the upload URL first');
      if (bytes.length !== upload.sizeBytes) throw new InvalidInput(`The file is ${bytes.length} bytes, not the ${upload.sizeBytes} announced`);
      const problem = scriptFileProblem(bytes);
      if (problem) throw new InvalidInput(`The script ${problem}`);
      if (sha256Hex(bytes) !== upload.sha256) throw new InvalidInput('The file does not match the SHA-256 announced: it changed or was cut in transit');
      const version = await publishScript(
        { scripts: deps.scripts, versions: stores.versions },
        { id: newId('ver'), projectId: project.id, bytes, notes: upload.notes, now },
      );
      await recordChange(context, AUDIT_ACTIONS.uploadVersion, {}, { version_id: version.id, version_number: version.version_number });
      return json(version);
    } finally {
      await deps.staging.discard(upload);
      await stores.uploads.remove(project.id, uploadId);
    }
  },
});
