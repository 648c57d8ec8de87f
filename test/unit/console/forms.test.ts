import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { DURATION_PRESETS, IssueKeysBody, MAX_FINGERPRINTS, MAX_KEYS_PER_API_ISSUE, MAX_NOTE_LENGTH as SERVER_MAX_NOTE } from '#schemas/requests';
import {
  banReasonProblem,
  DURATIONS,
  hex,
  type IssueFormFields,
  MAX_ISSUE_COUNT,
  MAX_MACHINES,
  MAX_NOTE_LENGTH,
  MAX_SCRIPT_BYTES,
  scriptFileProblem,
  validateEditKeyForm,
  validateIssueForm,
} from '../../../console/src/logic/forms';

const BLANK: IssueFormFields = { count: '1', duration: '30d', maxUses: '', maxMachines: '', note: '', discordId: '' };

describe('console Issue keys form', () => {
  it('keeps the server limits: count, note length, machines and the duration presets', () => {
    expect(MAX_ISSUE_COUNT).toBe(MAX_KEYS_PER_API_ISSUE);
    expect(MAX_NOTE_LENGTH).toBe(SERVER_MAX_NOTE);
    expect(MAX_MACHINES).toBe(MAX_FINGERPRINTS);
    expect(DURATIONS).toEqual([...Object.keys(DURATION_PRESETS), 'lifetime']);
  });

  it('sends blanks as no cap and not bound, and leaves out an empty note and Discord ID', () => {
    expect(validateIssueForm(BLANK)).toEqual({ ok: true, body: { count: 1, duration: '30d', max_uses: null, max_fingerprints: null } });
  });

  it('sends what was typed, trimmed, in the body the issue route takes', () => {
    const result = validateIssueForm({
      count: ' 5 ',
      duration: 'lifetime',
      maxUses: '10',
      maxMachines: '2',
      note: 'alice <vip>',
      discordId: ' 123456789012345678 ',
    });
    expect(result).toEqual({
      ok: true,
      body: { count: 5, duration: 'lifetime', max_uses: 10, max_fingerprints: 2, note: 'alice <vip>', discord_id: '123456789012345678' },
    });
    if (result.ok) expect(z.safeParse(IssueKeysBody, result.body).success).toBe(true);
  });

  it('names every field that breaks a rule, and sends nothing', () => {
    const result = validateIssueForm({ count: '101', duration: '2w', maxUses: '0', maxMachines: '11', note: 'x'.repeat(256), discordId: 'alice#1234' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(Object.keys(result.errors).sort()).toEqual(['count', 'discordId', 'duration', 'maxMachines', 'maxUses', 'note']);
    expect(validateIssueForm({ ...BLANK, count: '0' }).ok).toBe(false);
    expect(validateIssueForm({ ...BLANK, count: '2.5' }).ok).toBe(false);
    expect(validateIssueForm({ ...BLANK, maxMachines: '-1' }).ok).toBe(false);
    expect(validateIssueForm({ ...BLANK, discordId: '1234567890123456' }).ok).toBe(false);
  });
});

describe('console key edit form', () => {
  it('turns blanks into nulls, which clear the field', () => {
    expect(validateEditKeyForm({ note: '', discordId: '', maxUses: '', maxMachines: '' })).toEqual({
      ok: true,
      body: { note: null, discord_id: null, max_uses: null, max_fingerprints: null },
    });
    expect(validateEditKeyForm({ note: 'bob', discordId: '12345678901234567', maxUses: '3', maxMachines: '10' })).toEqual({
      ok: true,
      body: { note: 'bob', discord_id: '12345678901234567', max_uses: 3, max_fingerprints: 10 },
    });
  });

  it('refuses what the PATCH route refuses', () => {
    const result = validateEditKeyForm({ note: 'x'.repeat(256), discordId: '12', maxUses: 'many', maxMachines: '0' });
    expect(result.ok ? [] : Object.keys(result.errors).sort()).toEqual(['discordId', 'maxMachines', 'maxUses', 'note']);
  });

  it('wants a ban reason of 1 to 200 characters', () => {
    expect(banReasonProblem('')).toMatch(/required/);
    expect(banReasonProblem('   ')).toMatch(/required/);
    expect(banReasonProblem('x'.repeat(201))).toMatch(/at most 200/);
    expect(banReasonProblem('chargeback')).toBeNull();
  });
});

describe('console script file check', () => {
  it('takes 1 byte to 5 MiB of UTF-8, as versions upload does', () => {
    expect(scriptFileProblem(new TextEncoder().encode('print("hé")'))).toBeNull();
    expect(scriptFileProblem(new Uint8Array(MAX_SCRIPT_BYTES).fill(0x20))).toBeNull();
  });

  it('names an empty, a too large and a non-UTF-8 file', () => {
    expect(scriptFileProblem(new Uint8Array(0))).toMatch(/empty/);
    expect(scriptFileProblem(new Uint8Array(MAX_SCRIPT_BYTES + 1).fill(0x20))).toMatch(/5 MiB/);
    expect(scriptFileProblem(new Uint8Array([0x70, 0xff, 0xfe]))).toMatch(/UTF-8/);
  });

  it('writes a digest as lowercase hex', async () => {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('abc'));
    expect(hex(digest)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
