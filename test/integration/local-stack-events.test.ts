import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort, scriptFileOf } from '#test-support/fixtures';
import { expectEmbeds as expectEmbedsAt } from '#test-support/local-stack-inbox';

// Each of the five events, made to fire in the running local stack by dashboard commands alone, arrives as
// exactly one embed at the stack's Discord stand-in (the page at inboxUrl shows the same messages).

const COLORS = { version_deployed: 2278116, execution_drop: 15548997, new_executor: 3447003, key_abuse: 16096779, clone_detected: 10181046 };
const DAY = 86_400;

let stack: LocalStack;
let dashboard: { context: DashboardContext; close(): void };

/** `npm run -s dashboard -- <words...>`, in-process: the CLI's own command table and argument checks. */
async function dashboardCommand(...argv: string[]): Promise<object> {
  const words = argv.filter((arg, i) => !arg.startsWith('--') && (i === 0 || !argv[i - 1]?.startsWith('--')));
  const name = Object.keys(COMMANDS).find((candidate) => candidate === words.slice(0, candidate.split(' ').length).join(' '));
  if (!name) throw new Error(`no command in ${argv.join(' ')}`);
  return COMMANDS[name]!.prepare(argv.slice(name.split(' ').length))(dashboard.context);
}

/** Exactly `count` embeds of the color at this stack's inbox, once they arrived. */
const expectEmbeds = (color: number, count: number) => expectEmbedsAt(stack.discord, color, count);

beforeAll(async () => {
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-events-${Date.now()}`,
    stateFile: `/tmp/local-events-${process.pid}.json`,
  });
  dashboard = openContext({
    kind: 'local',
    endpoint: stack.dynamodbEndpoint,
    tableName: stack.tableName,
    scripts: { bucketName: stack.bucketName, endpoint: stack.s3Endpoint },
  });
  // The demo's three seeded uploads are delivered first; later assertions count from there.
  await expectEmbeds(COLORS.version_deployed, 3);
}, 120_000);

afterAll(async () => {
  dashboard?.close();
  await stack?.stop();
});

describe('events in the local stack, from dashboard commands to one embed each', () => {
  it('version_deployed: an upload posts one green embed with the version, size and notes', async () => {
    await dashboardCommand('versions', 'upload', '--project', stack.projectId, '--file', scriptFileOf(12595), '--notes', 'Local e2e');
    const [, , , embed] = await expectEmbeds(COLORS.version_deployed, 4);
    expect(embed?.fields?.map((field) => field.value)).toEqual(['v4', '12.3 KB', 'Local e2e']);
  });

  it('new_executor: a first execution by an executor posts one blue embed naming it', async () => {
    await dashboardCommand('telemetry', 'execution', '--project', stack.projectId, '--executor', 'Synapse', '--count', '3');
    const [embed] = await expectEmbeds(COLORS.new_executor, 1);
    expect(JSON.stringify(embed)).toContain('Synapse');
  });

  it('clone_detected: a second script hash for the script posts one purple embed', async () => {
    await dashboardCommand('telemetry', 'execution', '--project', stack.projectId, '--executor', 'Synapse', '--hash', 'aaaaaaaaaaaaaaaa');
    await dashboardCommand('telemetry', 'execution', '--project', stack.projectId, '--executor', 'Synapse', '--hash', 'bbbbbbbbbbbbbbbb');
    const [embed] = await expectEmbeds(COLORS.clone_detected, 1);
    expect(JSON.stringify(embed)).toContain('bbbbbbbbbbbbbbbb');
  });

  it('key_abuse: one key validated from six fingerprints within the hour posts one amber embed', async () => {
    const { keys } = (await dashboardCommand('keys', 'issue', '--project', stack.projectId)) as { keys: { id: string }[] };
    const keyId = keys[0]!.id;
    await dashboardCommand('telemetry', 'validation', '--project', stack.projectId, '--key', keyId, '--result', 'ok', '--executor', 'Synapse', '--count', '6');
    const [embed] = await expectEmbeds(COLORS.key_abuse, 1);
    // Markdown-escaped as Discord needs it, so `key_…` does not turn italic.
    expect(embed?.fields?.find((field) => field.name === 'Key')?.value).toBe(keyId.replaceAll('_', '\\_'));
  });

  it('execution_drop: a day with half the executions of the day before posts one red embed after detect daily', async () => {
    const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
    await dashboardCommand(
      'telemetry',
      'execution',
      '--project',
      stack.projectId,
      '--executor',
      'Synapse',
      '--at',
      String(today - 2 * DAY + 60),
      '--count',
      '10',
    );
    await dashboardCommand('telemetry', 'execution', '--project', stack.projectId, '--executor', 'Synapse', '--at', String(today - DAY + 60), '--count', '5');
    await dashboardCommand('detect', 'daily');
    const [embed] = await expectEmbeds(COLORS.execution_drop, 1);
    expect(JSON.stringify(embed)).toContain('50');
  });
});
