import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '#dashboard/args';
import { detectDaily, type TelemetryCommand, telemetryExecution, telemetryValidation } from '#dashboard/commands/telemetry';
import { CommandError } from '#dashboard/context';
import type { TelemetryStore } from '#domain/ports';

const NOW = 1_700_000_000;

function validate<Input>(command: TelemetryCommand<Input, object>, argv: string[]): Input {
  return command.validate(parseFlags(command.name, argv, command.flags));
}

/** A store that only answers whether a project exists; any write (or other read) fails the test. */
function projectsOnly(existing: string[]): TelemetryStore {
  const store: Pick<TelemetryStore, 'projectExists'> = { projectExists: async (projectId) => existing.includes(projectId) };
  return new Proxy(store as TelemetryStore, {
    get: (target, name) => {
      if (name === 'projectExists') return target.projectExists;
      throw new Error(`unexpected store call: ${String(name)}`);
    },
  });
}

const execution = ['--project', 'prj_a', '--executor', 'Synapse X'];
const validation = ['--project', 'prj_a', '--key', 'key_1', '--result', 'revoked', '--executor', 'Synapse X'];

describe('telemetry execution flags', () => {
  it('reads every flag into one execution record, N times at --at', () => {
    const input = validate(telemetryExecution, [
      ...execution,
      '--key',
      'key_1',
      '--hash',
      'ABCDEF0123',
      '--script',
      'scr_1',
      '--version',
      'ver_1',
      '--at',
      String(NOW),
      '--count',
      '3',
    ]);
    expect(input).toEqual({
      record: { kind: 'execution', projectId: 'prj_a', executor: 'Synapse X', keyId: 'key_1', scriptHash: 'abcdef0123', scriptId: 'scr_1', versionId: 'ver_1' },
      at: NOW,
      count: 3,
    });
  });

  it.each([
    [['--project', 'prj a', '--executor', 'X'], '--project: projectId must be 1-64 characters of A-Z, a-z, 0-9, _ or -; got "prj a"'],
    [[...execution, '--hash', 'not-hex'], '--hash: scriptHash must be 8-128 hex characters; got "not-hex"'],
    [['--project', 'prj_a', '--executor', 'x'.repeat(101)], `--executor: executor must be at most 100 characters; got "${'x'.repeat(101)}"`],
    [['--project', 'prj_a', '--executor', ' '], '--executor: executor must not be empty; got " "'],
    [[...execution, '--count', '0'], '--count must be a whole number from 1 to 10000; got "0"'],
    [[...execution, '--count', '10001'], '--count must be a whole number from 1 to 10000; got "10001"'],
    [[...execution, '--at', '1.5'], '--at must be a whole number from 0 to 99999999999; got "1.5"'],
  ])('refuses %j with a message that names the flag', (argv, message) => {
    expect(() => validate(telemetryExecution, argv)).toThrow(new UsageError(message));
  });

  it('refuses an --at in the future when run, before writing anything', async () => {
    const input = validate(telemetryExecution, [...execution, '--at', String(NOW + 301)]);
    await expect(telemetryExecution.run({ stores: { telemetry: projectsOnly(['prj_a']) }, now: () => NOW }, input)).rejects.toThrow(
      new UsageError(`at (${NOW + 301}) is more than 300 s in the future`),
    );
  });

  it('refuses an unknown project when run, before writing anything', async () => {
    const input = validate(telemetryExecution, execution);
    await expect(telemetryExecution.run({ stores: { telemetry: projectsOnly([]) }, now: () => NOW }, input)).rejects.toThrow(
      new CommandError('Project prj_a not found: create one with "project create"'),
    );
  });
});

describe('telemetry validation flags', () => {
  it('hashes --fingerprint as the loader does, so the raw value is never stored', () => {
    const input = validate(telemetryValidation, [...validation, '--fingerprint', 'client-a']);
    expect(input.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(input.fingerprint).not.toContain('client-a');
    expect(validate(telemetryValidation, [...validation, '--fingerprint', 'client-a']).fingerprint).toBe(input.fingerprint);
  });

  it('leaves the fingerprint to each record when --fingerprint is absent', () => {
    expect(validate(telemetryValidation, validation)).toMatchObject({ fingerprint: undefined, count: 1, at: undefined });
  });

  it.each([
    [
      ['--project', 'prj_a', '--key', 'key_1', '--result', 'stolen', '--executor', 'X'],
      '--result must be one of ok, revoked, banned, expired, hwid_locked, over_limit, unknown; got "stolen"',
    ],
    [
      ['--project', 'prj_a', '--key', 'KEY#1', '--result', 'ok', '--executor', 'X'],
      '--key: keyId must be 1-64 characters of A-Z, a-z, 0-9, _ or -; got "KEY#1"',
    ],
    [[...validation, '--fingerprint', ' '], '--fingerprint must be 1-256 characters'],
  ])('refuses %j with a message that names the flag', (argv, message) => {
    expect(() => validate(telemetryValidation, argv)).toThrow(new UsageError(message));
  });
});

describe('detect daily flags', () => {
  it('takes a real --date or none', () => {
    expect(validate(detectDaily, ['--date', '2024-02-29'])).toEqual({ today: '2024-02-29' });
    expect(validate(detectDaily, [])).toEqual({ today: undefined });
  });

  it('refuses a --date that is not a real day', () => {
    expect(() => validate(detectDaily, ['--date', '2023-02-29'])).toThrow(new UsageError('--date must be a real day as YYYY-MM-DD; got "2023-02-29"'));
  });
});
