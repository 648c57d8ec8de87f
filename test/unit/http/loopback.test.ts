import { describe, expect, it } from 'vitest';
import { isLoopbackHostHeader, isLoopbackHostname } from '#http/loopback';

/** The one rule of what is this machine: sdapi's plain-http and stack.json checks, and the local servers' Host check. */
describe('loopback names', () => {
  it('takes localhost, 127.0.0.0/8 and [::1] as URL hostnames, and nothing that merely contains them', () => {
    for (const name of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '127.255.255.255', '[::1]']) expect(isLoopbackHostname(name), name).toBe(true);
    for (const name of [
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '128.0.0.1',
      '127.0.0.256',
      '10.0.0.1',
      '0.0.0.0',
      '[::]',
      '[::ffff:7f00:1]',
      'evil.example',
      '',
    ]) {
      expect(isLoopbackHostname(name), name).toBe(false);
    }
  });

  it('takes a Host header naming the loopback with or without a port, and refuses any other name, a bad port or none', () => {
    for (const host of ['localhost', 'localhost:3000', '127.0.0.1:3000', '[::1]:3000', '[::1]', 'LocalHost:65535'])
      expect(isLoopbackHostHeader(host), host).toBe(true);
    for (const host of [
      undefined,
      '',
      'evil.example',
      'evil.example:3000',
      'localhost.evil.example:3000',
      '127.0.0.1.nip.io:3000',
      '127.0.0.1:99999',
      '127.0.0.1:3000@evil.example',
      'localhost:3000/x',
      '::1',
    ]) {
      expect(isLoopbackHostHeader(host), String(host)).toBe(false);
    }
  });
});
