import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../sdapi/config';

const NO_STACK = '/nonexistent-sdapi-folder';
const env = { SDAPI_BASE_URL: 'http://127.0.0.1:3000/', SDAPI_TOKEN: 'sdt_abcdefghijklmnopqrstuvwxyz', SDAPI_PROJECT: 'prj_5e0c8a3f71b24d9c6a1f' };

describe('resolveConfig', () => {
  it('takes SDAPI_* variables and drops the trailing slash of the base URL', () => {
    expect(resolveConfig({}, env, NO_STACK)).toEqual({
      baseUrl: 'http://127.0.0.1:3000',
      token: env.SDAPI_TOKEN,
      projectId: env.SDAPI_PROJECT,
      sources: ['API base URL from SDAPI_BASE_URL', 'API token from SDAPI_TOKEN', 'project id from SDAPI_PROJECT'],
    });
  });

  it('prefers flags to variables', () => {
    const config = resolveConfig({ baseUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod', project: 'prj_other' }, env, NO_STACK);
    expect(config).toMatchObject({ baseUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod', projectId: 'prj_other' });
  });

  it('refuses base URLs that are not http(s) or that carry credentials', () => {
    expect(() => resolveConfig({ baseUrl: 'localhost:3000' }, env, NO_STACK)).toThrow('API base URL must be http or https, not localhost:');
    expect(() => resolveConfig({ baseUrl: 'not a url' }, env, NO_STACK)).toThrow('is not a URL');
    expect(() => resolveConfig({ baseUrl: 'https://user:pass@api.test' }, env, NO_STACK)).toThrow('must not carry credentials');
  });

  it('refuses a project id that no project could have', () => {
    expect(() => resolveConfig({ project: 'prj/../x' }, env, NO_STACK)).toThrow('Project id "prj/../x" is malformed');
  });

  it('refuses plain http to any host but this machine, so a bearer token never crosses a network in clear', () => {
    expect(() => resolveConfig({ baseUrl: 'http://api.example.com' }, env, NO_STACK)).toThrow('API base URL must use https for api.example.com');
    expect(() => resolveConfig({ baseUrl: 'http://127.0.0.1.nip.io:3000' }, env, NO_STACK)).toThrow('must use https');
    for (const local of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
      expect(resolveConfig({ baseUrl: local }, env, NO_STACK).baseUrl).toBe(local);
    }
  });
});

describe("resolveConfig and a folder's .local/stack.json", () => {
  const folderNaming = (stack: Record<string, string>): string => {
    const cwd = mkdtempSync(join(tmpdir(), 'sdapi-config-'));
    mkdirSync(join(cwd, '.local'));
    writeFileSync(join(cwd, '.local', 'stack.json'), JSON.stringify(stack));
    return cwd;
  };
  const demo = { baseUrl: 'http://127.0.0.1:3000', token: 'sdt_demo-token-from-the-local-stack', projectId: 'prj_demo' };

  it('takes every setting from the file when no flag and no SDAPI_* variable is set', () => {
    expect(resolveConfig({}, {}, folderNaming(demo))).toMatchObject({ baseUrl: demo.baseUrl, token: demo.token, projectId: demo.projectId });
  });

  it('ignores the file once any SDAPI_* variable or flag is set, so a folder cannot redirect a token the caller chose', () => {
    const cwd = folderNaming({ ...demo, baseUrl: 'http://127.0.0.1:9999' });
    expect(() => resolveConfig({}, { SDAPI_TOKEN: env.SDAPI_TOKEN }, cwd)).toThrow('No API base URL: set SDAPI_BASE_URL');
    expect(() => resolveConfig({ token: env.SDAPI_TOKEN }, {}, cwd)).toThrow('No API base URL');
    expect(() => resolveConfig({}, { SDAPI_BASE_URL: 'https://api.example.com' }, cwd)).toThrow('No API token');
  });

  it('takes only a loopback base URL from the file', () => {
    for (const baseUrl of ['http://attacker.example:3000', 'https://attacker.example', 'http://10.0.0.5:3000']) {
      expect(() => resolveConfig({}, {}, folderNaming({ ...demo, baseUrl }))).toThrow('.local/stack.json names');
    }
    expect(resolveConfig({}, {}, folderNaming({ ...demo, baseUrl: 'http://localhost:4000' })).baseUrl).toBe('http://localhost:4000');
  });
});
