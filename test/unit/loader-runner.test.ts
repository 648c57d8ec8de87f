import { describe, expect, it } from 'vitest';
import { configuredStub } from '#domain/stub-loader';
import { parseLoaderArgs, stubTarget } from '#loader-runner/run';

describe('npm run loader: its arguments', () => {
  it('takes the key, and the machine id the stub hashes into its fingerprint', () => {
    expect(parseLoaderArgs(['--key', 'sdk_1', '--fingerprint', 'machine-a', '--state-file', '/tmp/s.json'])).toEqual({
      key: 'sdk_1',
      machineId: 'machine-a',
      stateFile: '/tmp/s.json',
    });
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
    expect(configuredStub(source, { api_base_url: 'http://127.0.0.1:3000', project_id: 'prj_1' })).toBe(
      '\tapi_base_url = "http://127.0.0.1:3000",\n\tproject_id = "prj_1",\n',
    );
    expect(() => configuredStub(source, { cache_folder: 'x' })).toThrow('no STUB_SETTINGS line for cache_folder');
  });
});

describe('npm run loader: --project and --base-url, the stub settings a publisher sets', () => {
  it('reads the local stack from .local/stack.json in the current folder unless --state-file names another', () => {
    expect(parseLoaderArgs(['--key', 'sdk_1', '--fingerprint', 'm'], '/repo').stateFile).toBe('/repo/.local/stack.json');
    expect(parseLoaderArgs(['--key', 'sdk_1', '--fingerprint', 'm', '--state-file', 'other.json'], '/repo').stateFile).toBe('/repo/other.json');
  });

  it("sends the fetch for another project than the demo's, to the local stack's URL unless --base-url names one", () => {
    const stack = { baseUrl: 'http://127.0.0.1:3000', projectId: 'prj_demo' };
    expect(stubTarget(parseLoaderArgs(['--key', 'sdk_1', '--project', 'prj_sold'], '/repo'), stack)).toEqual({
      baseUrl: 'http://127.0.0.1:3000',
      projectId: 'prj_sold',
    });
    expect(stubTarget(parseLoaderArgs(['--key', 'sdk_1', '--base-url', 'https://api.example.com', '--project', 'prj_sold'], '/repo'), undefined)).toEqual({
      baseUrl: 'https://api.example.com',
      projectId: 'prj_sold',
    });
    expect(stubTarget(parseLoaderArgs(['--key', 'sdk_1'], '/repo'), stack)).toEqual(stack);
  });

  it('says to start the stack, or to pass both flags, when the state file is missing and a setting is not given', () => {
    expect(stubTarget(parseLoaderArgs(['--key', 'sdk_1', '--project', 'prj_sold'], '/repo'), undefined)).toBe(
      'No running local stack (/repo/.local/stack.json not found): run npm start first, or pass both --base-url and --project',
    );
  });

  it('refuses a --base-url that is not an http(s) URL', () => {
    expect(() => parseLoaderArgs(['--key', 'sdk_1', '--base-url', '127.0.0.1:3000'])).toThrow('--base-url "127.0.0.1:3000" is not an http(s) URL');
  });
});
