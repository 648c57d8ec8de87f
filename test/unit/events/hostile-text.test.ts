import { describe, expect, it } from 'vitest';
import { type Embed, embedMessage, embedProblems, escapeMarkdown } from '#domain/webhooks/embeds';
import type { ProjectEvent } from '#schemas/events';
import { LoaderCheckRequest } from '#schemas/loader';
import { ExecutionRecordSchema, ValidationRecordSchema } from '#schemas/telemetry';

/**
 * Text a sender chooses (executor names, notes, project names, ids, hashes) must reach Discord as text: no
 * heading, list, quote, link, masked link, mention, code block or spoiler, and nothing that reorders the text
 * around it. A corpus of hostile names goes through every slot of every embed that shows sender text.
 */

const HOSTILE = [
  '# @everyone free keys https://evil.example/x',
  '## big\n### bigger',
  '-# subtext',
  '@here look',
  '<@123456789012345678>',
  '<@&987654321098765432>',
  '<#123456789012345678>',
  '[click here](https://evil.example/steal)',
  '[x](<https://evil.example>)',
  '<https://evil.example>',
  'http://evil.example',
  'https://discord.gg/invite',
  '```js\nalert(1)\n```',
  '`inline`',
  '> quoted\n>>> all quoted',
  '- item',
  '  + item',
  '1. first',
  '||spoiler||',
  '**bold** __underline__ ~~strike~~ *em* _em_',
  ':skull: <:emoji:123456789012345678>',
  '<t:1700000000:F>',
  'exe\u202Etxt.exe',
  'left\u2066isolated\u2069right',
  'mark\u200Fhere\u061C',
  'line\u2028break\u2029paragraph',
  '\u0007bell\u001b[31mred\u0085next',
  'tab\there',
];

/**
 * Markup Discord would make of a text, found where it is not escaped; empty when the text is inert. Emphasis is
 * looked for only with `emphasis` (sender text alone): the embeds' own text is bold and holds `key_id`.
 */
function activeMarkup(text: string, { emphasis = false } = {}): string[] {
  const found: string[] = [];
  const check = (what: string, pattern: RegExp) => {
    if (pattern.test(text)) found.push(what);
  };
  check('a mention', /(?<!\\)@(everyone|here)|(?<!\\)<[@#:&t]/);
  check('a link', /https?(?<!\\):\/\//i);
  check('a masked link', /(?<!\\)\[[^\]]*(?<!\\)\]\(/);
  check('a heading or subtext', /^\s*-?#{1,3}\s/m);
  check('a quote', /^\s*>/m);
  check('a list item', /^\s*([-+*]|\d+\.)\s/m);
  check('a code span', /(?<!\\)`/);
  check('a spoiler', /(?<!\\)\|\|/);
  if (emphasis) check('emphasis', /(?<!\\)(\*|_|~~)\S/);
  // Line breaks are the embeds' own (one sampled item a line); any other control character is not.
  check('a control or bidirectional character', /(?!\n)[\p{Cc}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u);
  return found;
}

const AT = 1_700_000_000;
const PROJECT_ID = 'prj_0a1b2c3d4e5f60718293';
const event = (name: ProjectEvent['name'], data: unknown): ProjectEvent => ({ name, projectId: PROJECT_ID, occurredAt: AT, data }) as ProjectEvent;
const executorData = (executor: string) => ({ executor, firstSeenAt: AT, previouslySeenAt: null });
const cloneData = (text: string) => ({ scriptId: text, versionId: text, newHash: text, originalHash: text, distinctHashes: 9, sampleHashes: [text, text] });

/** Every embed that shows `text` in a slot a sender controls, with what the slot is. */
function embedsShowing(text: string): [string, ProjectEvent, string][] {
  const safeName = 'Script';
  return [
    ['the project name', event('version_deployed', { versionId: 'ver_1', versionNumber: 1, sizeBytes: 10, notes: '' }), text],
    ['version notes', event('version_deployed', { versionId: 'ver_1', versionNumber: 1, sizeBytes: 10, notes: text }), safeName],
    ['an executor name', event('new_executor', executorData(text)), safeName],
    ['an executor in a summary', event('new_executor', { count: 9, firstAt: AT, lastAt: AT, sample: [executorData(text)] }), safeName],
    [
      'an executor in a digest',
      event('new_executor', { hour: '2023-11-14T22', posted: 3, held: 9, untracked: 4, firstAt: AT, lastAt: AT, sample: [executorData(text)] }),
      safeName,
    ],
    ['a key id', event('key_abuse', { keyId: text, pattern: 'many_fingerprints', count: 9, threshold: 5, windowSeconds: 3600 }), safeName],
    ['script ids and hashes', event('clone_detected', cloneData(text)), safeName],
    ['script ids and hashes in a summary', event('clone_detected', { count: 9, firstAt: AT, lastAt: AT, sample: [cloneData(text)] }), safeName],
  ];
}

const textOf = (embed: Embed) => [embed.title, embed.description, ...embed.fields.flatMap((field) => [field.name, field.value]), embed.footer.text];

describe('sender text in Discord embeds', () => {
  it('the corpus is hostile: each name makes markup when sent raw', () => {
    for (const name of HOSTILE) expect(activeMarkup(name, { emphasis: true }), name).not.toEqual([]);
  });

  it.each(HOSTILE)('escapes %j to inert text, emphasis included', (name) => {
    expect(activeMarkup(escapeMarkdown(name), { emphasis: true })).toEqual([]);
    expect(activeMarkup(escapeMarkdown(name, 1024, { keepLines: true }), { emphasis: true })).toEqual([]);
  });

  it('escapes a backslash, so text cannot cancel the escape that follows it', () => {
    expect(escapeMarkdown('\\*x\\*')).toBe('\\\\\\*x\\\\\\*');
  });

  it.each(HOSTILE)('%j makes no markup in any embed slot, and every embed stays valid', (name) => {
    for (const [slot, projectEvent, projectName] of embedsShowing(name)) {
      const message = embedMessage(projectEvent, projectName);
      for (const embed of message.embeds) {
        expect(embedProblems(embed), slot).toEqual([]);
        for (const text of textOf(embed)) expect(activeMarkup(text), `${slot}: ${text}`).toEqual([]);
      }
    }
  });

  it('posts every message with allowed_mentions {"parse": []}, so no text of it can ping anyone', () => {
    for (const [, projectEvent, projectName] of embedsShowing('@everyone')) {
      expect(embedMessage(projectEvent, projectName).allowed_mentions).toEqual({ parse: [] });
    }
  });

  it("shows the issue's executor as plain text: heading, mention and link escaped", () => {
    expect(escapeMarkdown('# @everyone … https://evil.example/x')).toBe('\\# \\@everyone … https\\://evil.example/x');
  });

  it('replaces control and bidirectional-override characters with U+FFFD, and keeps the lines of notes', () => {
    expect(escapeMarkdown('exe\u202Etxt.exe')).toBe('exe\uFFFDtxt.exe');
    expect(escapeMarkdown('# Fixes\n- the loader\n1. again', 1024, { keepLines: true })).toBe('\\# Fixes\n\\- the loader\n1\\. again');
  });
});

describe('executor names at the edge', () => {
  const check = { project_id: 'prj_x', key: 'k', fingerprint: 'a'.repeat(64) };
  const record = { kind: 'execution', projectId: 'prj_x', at: AT };
  const validation = { ...record, kind: 'validation', keyId: 'key_x', result: 'ok', fingerprint: 'a'.repeat(16) };

  it.each(['exe\u202Etxt', 'a\u2066b', 'mark\u200F', 'line\u2028break', 'bell\u0007'])(
    'refuses %j in a loader check and in both telemetry records',
    (executor) => {
      const problem = 'executor must not contain control, invisible or bidirectional-override characters';
      expect(LoaderCheckRequest.safeParse({ ...check, executor }).error?.issues.map((issue) => issue.message)).toEqual([problem]);
      expect(ExecutionRecordSchema.safeParse({ ...record, executor }).error?.issues.map((issue) => issue.message)).toEqual([problem]);
      expect(ValidationRecordSchema.safeParse({ ...validation, executor }).error?.issues.map((issue) => issue.message)).toEqual([problem]);
    },
  );

  it('still takes names with markdown in them: those are escaped where they are shown', () => {
    expect(LoaderCheckRequest.safeParse({ ...check, executor: '# @everyone [x](https://evil.example)' }).success).toBe(true);
  });
});
