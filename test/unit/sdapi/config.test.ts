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
});
