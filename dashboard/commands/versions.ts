import { readFile } from 'node:fs/promises';
import { UsageError } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { CommandError, oneLine } from '#dashboard/context';
import { newId } from '#domain/ids';
import { publishScript, scriptFileProblem, type UploadAnswer } from '#domain/scripts';
import { MAX_VERSION_NOTES_LENGTH } from '#schemas/console';
import { printableText, projectId, requireProject } from './input';

/** The file's bytes, checked to be a script; anything else is one line naming the problem. */
async function scriptFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--file ${path} cannot be read: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : oneLine(error)}`);
  }
  const problem = scriptFileProblem(bytes);
  if (problem) throw new UsageError(`--file ${path} ${problem}`);
  return bytes;
}

/**
 * Upload a script: the file is read and checked whole before anything is written (1 byte to 5 MiB, UTF-8), then
 * stored and its version written and made current (#domain/scripts publishScript says in what order, and how a
 * failed version write is cleaned up).
 */
export const versionsUpload: Command<{ projectId: string; file: string; notes: string }, UploadAnswer> = {
  name: 'versions upload',
  flags: {
    project: { required: true, placeholder: 'ID' },
    file: { required: true, placeholder: 'PATH' },
    notes: { placeholder: 'TEXT' },
  },
  validate: (flags) => ({
    projectId: projectId(flags),
    file: flags.required('file'),
    notes: printableText('notes', flags.optional('notes') ?? '', MAX_VERSION_NOTES_LENGTH, { allowEmpty: true }),
  }),
  async run(context, input) {
    const bytes = await scriptFile(input.file);
    if (!context.scripts)
      throw new CommandError(
        'No scripts bucket known: run npm start, or set SCRIPT_BUCKET (and S3_ENDPOINT for a local S3), or deploy the stack (output ScriptBucketName)',
      );
    await requireProject(context, input.projectId);
    return publishScript(
      { scripts: context.scripts, versions: context.stores.dashboard },
      { id: newId('ver'), projectId: input.projectId, bytes, notes: input.notes, now: context.now() },
    );
  },
};
