import { describe, expect, it } from 'vitest';
import { configuredStub, parseLoaderArgs } from '#loader-runner/run';

describe('npm run loader: its arguments', () => {
  it('takes the key, and the machine id the stub hashes into its fingerprint', () => {
    expect(parseLoaderArgs(['--key', 'sdk_1', '--fingerprint', 'machine-a', '--state-file', '/tmp/s.json'])).toEqual({ key: 'sdk_1', machineId: 'machine-a', stateFile: '/tmp/s.json' });
  });

  it.each([
    [[], /--key is required: the demo key is "demoKey" in .local\/stack.json/],
    [['--key'], /--key needs a value/],
    [['--key', 'sdk_1', '--verbose'], /Unexpected argument "--verbose"/],
  ])('refuses %j in one sentence with the usage', (argv, message) => {
    expect(() => parseLoaderArgs(argv)).toThrow(message);
  });
});

describe('configuredStub', () => {
  it('sets STUB_SETTINGS lines as a publisher edits them, and fails on a setting the stub has no line for', () => {
    const source = '\tapi_base_url = "https://api.example.com",\n\tproject_id = "prj_your_project_id",\n';
    expect(configuredStub(source, { api_base_url: 'http://127.0.0.1:3000', project_id: 'prj_1' })).toBe('\tapi_base_url = "http://127.0.0.1:3000",\n\tproject_id = "prj_1",\n');
    expect(() => configuredStub(source, { cache_folder: 'x' })).toThrow('no STUB_SETTINGS line for cache_folder');
  });
});
