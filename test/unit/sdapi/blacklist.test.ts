import { beforeEach, describe, expect, it } from 'vitest';
import { emailSha256 } from '#domain/blacklist';
import { PROJECT_ID, runCli, TOKEN } from '#test-support/sdapi-run-cli';
import { StandInApi } from '#test-support/sdapi-stand-in-api';
import { EXIT } from '../../../sdapi/errors';

/** `sdapi blacklist add`: one buyer per entry, an email hashed on this machine, the API's rules as flag errors. */

let api: StandInApi;

beforeEach(() => {
  api = new StandInApi({ token: TOKEN, projectId: PROJECT_ID });
});

describe('sdapi blacklist add', () => {
  it('sends the hash of the trimmed, lowercased address for --email, never the address', async () => {
    const result = await runCli(['blacklist', 'add', '--email', ' Leaker@Example.com ', '--reason', 'Chargeback'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(api.blacklisted).toEqual([{ email_sha256: emailSha256('leaker@example.com'), reason: 'Chargeback' }]);
    expect(JSON.stringify(api.requests)).not.toContain('Example.com');
    expect(result.stdout).toMatch(/^Blacklisted as ble_[A-Za-z0-9_-]{43}; banned 0 keys\.\n$/);
  });

  it('refuses two buyers, or none, naming the flags, and sends nothing', async () => {
    const two = await runCli(['blacklist', 'add', '--discord-id', '123456789012345678', '--fingerprint', 'a'.repeat(64), '--reason', 'x'], { api });
    expect(two.code).toBe(EXIT.usage);
    expect(two.stderr).toContain('Send exactly one of fingerprint, --discord-id or --email-sha256');
    const none = await runCli(['blacklist', 'add', '--reason', 'x'], { api });
    expect(none.code).toBe(EXIT.usage);
    const bad = await runCli(['blacklist', 'add', '--discord-id', '12', '--reason', 'x'], { api });
    expect(bad.stderr).toContain('--discord-id must be a Discord user id');
    expect(api.requests).toEqual([]);
  });
});
