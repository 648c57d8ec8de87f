import { issueKeys } from '#domain/selling-keys';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { IssueKeysBody, NoQuery } from '#schemas/requests';

/** POST /v1/projects/{id}/keys */
export const issueKeysEndpoint = defineEndpoint({
  scope: scopeNeededBy('issue-keys'),
  query: NoQuery,
  body: IssueKeysBody,
  run: ({ project, body, now, actor }, _projects, audit, keys) => issueKeys(keys, project, body, now, { log: audit, actor }),
});

export const handler = awsApiHandler(issueKeysEndpoint);
