import { describe, expect, it } from 'vitest';
import {
  buildEmbed,
  codePointLength,
  EMBED_COLORS,
  EMBED_LIMITS,
  EMPTY_NOTES,
  type Embed,
  embedProblems,
  escapeMarkdown,
  FOOTER_TEXT,
  formatKilobytes,
  formatUtc,
  truncate,
} from '#domain/webhooks/embeds';
import type { ProjectEvent } from '#schemas/events';

const PROJECT_ID = 'prj_0a1b2c3d4e5f60718293';
const OCCURRED_AT = 1_700_000_000;

const deployed = (data: Partial<Extract<ProjectEvent, { name: 'version_deployed' }>['data']> = {}): ProjectEvent => ({
  name: 'version_deployed',
  projectId: PROJECT_ID,
  occurredAt: OCCURRED_AT,
  data: { versionId: 'ver_1', versionNumber: 3, sizeBytes: 12_595, notes: 'Fixes the loader', ...data },
});

const EXAMPLES: ProjectEvent[] = [
  deployed(),
  {
    name: 'execution_drop',
    projectId: PROJECT_ID,
    occurredAt: OCCURRED_AT,
    data: { date: '2023-11-13', executions: 1_150, previousExecutions: 2_000, dropPercent: 42.5 },
  },
  { name: 'new_executor', projectId: PROJECT_ID, occurredAt: OCCURRED_AT, data: { executor: 'Wave', firstSeenAt: OCCURRED_AT, previouslySeenAt: null } },
  {
    name: 'key_abuse',
    projectId: PROJECT_ID,
    occurredAt: OCCURRED_AT,
    data: { keyId: 'key_42', pattern: 'many_fingerprints', count: 12, threshold: 5, windowSeconds: 3600 },
  },
  {
    name: 'clone_detected',
    projectId: PROJECT_ID,
    occurredAt: OCCURRED_AT,
    data: {
      scriptId: PROJECT_ID,
      versionId: 'ver_1',
      newHash: 'b'.repeat(64),
      originalHash: 'a'.repeat(64),
      distinctHashes: 2,
      sampleHashes: ['a'.repeat(64), 'b'.repeat(64)],
    },
  },
];

describe('version_deployed embed (spec §6.2)', () => {
  it('has the exact shape: title, color 2278116, bold name and id, Version/Size/Notes inline, ISO timestamp, footer', () => {
    expect(buildEmbed(deployed(), 'Aimbot Deluxe')).toEqual({
      title: 'New version deployed',
      color: 2278116,
      description: `**Aimbot Deluxe** (${PROJECT_ID})`,
      fields: [
        { name: 'Version', value: 'v3', inline: true },
        { name: 'Size', value: '12.3 KB', inline: true },
        { name: 'Notes', value: 'Fixes the loader', inline: true },
      ],
      timestamp: '2023-11-14T22:13:20.000Z',
      footer: { text: FOOTER_TEXT },
    } satisfies Embed);
  });

  it('shows empty or blank notes as a visible placeholder, since Discord rejects an empty field value', () => {
    expect(buildEmbed(deployed({ notes: '' }), 'S').fields[2]).toEqual({ name: 'Notes', value: EMPTY_NOTES, inline: true });
    expect(buildEmbed(deployed({ notes: '  \n ' }), 'S').fields[2]?.value).toBe(EMPTY_NOTES);
  });

  it('writes the timestamp as ISO 8601 UTC with milliseconds', () => {
    expect(buildEmbed(deployed(), 'S').timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('cuts notes longer than a field value to 1024 code points ending in an ellipsis', () => {
    const notes = buildEmbed(deployed({ notes: '😀'.repeat(2000) }), 'S').fields[2]?.value ?? '';
    expect(codePointLength(notes)).toBe(EMBED_LIMITS.fieldValue);
    expect(notes.endsWith('😀…')).toBe(true);
  });
});

describe('formatKilobytes', () => {
  it('counts 1 KB as 1024 bytes with one decimal', () => {
    expect(formatKilobytes(12_595)).toBe('12.3 KB');
    expect(formatKilobytes(0)).toBe('0.0 KB');
    expect(formatKilobytes(1024)).toBe('1.0 KB');
    expect(formatKilobytes(5 * 1024 * 1024)).toBe('5120.0 KB');
  });
});

describe('the other four embeds', () => {
  it('use the documented colors: red drops, blue new executors, amber abuse, purple clones', () => {
    expect(EMBED_COLORS).toEqual({
      version_deployed: 2278116,
      execution_drop: 0xed4245,
      new_executor: 0x3498db,
      key_abuse: 0xf59e0b,
      clone_detected: 0x9b59b6,
    });
    for (const event of EXAMPLES) expect(buildEmbed(event, 'S').color).toBe(EMBED_COLORS[event.name]);
  });

  it('state the numbers that matter and what to do', () => {
    const byName = Object.fromEntries(EXAMPLES.map((event) => [event.name, buildEmbed(event, 'S')]));
    const values = (name: string) => Object.fromEntries((byName[name]?.fields ?? []).map((field) => [field.name, field.value]));
    expect(byName.execution_drop?.title).toBe('Executions fell 42.5 % day over day');
    expect(values('execution_drop')).toMatchObject({ 'Day (UTC)': '2023-11-13', Executions: '1,150', 'Day before': '2,000', Drop: '42.5 %' });
    expect(values('new_executor')).toMatchObject({ Executor: 'Wave', 'First seen': '2023-11-14 22:13 UTC', 'Seen before': 'never' });
    expect(values('key_abuse')).toMatchObject({ Key: 'key\\_42', Seen: '12 distinct devices in 1 h', Threshold: '5' });
    expect(values('clone_detected')).toMatchObject({ 'Distinct hashes': '2', 'New hash': 'b'.repeat(64) });
    for (const name of ['execution_drop', 'new_executor', 'key_abuse', 'clone_detected']) {
      expect(values(name)['What to do']).toMatch(/\w/);
    }
  });

  it('every embed carries the description, timestamp and footer of the spec', () => {
    for (const event of EXAMPLES) {
      const embed = buildEmbed(event, 'My Script');
      expect(embed.description).toBe(`**My Script** (${PROJECT_ID})`);
      expect(embed.timestamp).toBe('2023-11-14T22:13:20.000Z');
      expect(embed.footer).toEqual({ text: FOOTER_TEXT });
    }
  });

  it('shows the count of distinct hashes and at most the sample, however many hashes the script has', () => {
    const sample = Array.from({ length: 5 }, (_, i) => i.toString(16).padStart(64, '0'));
    const data = {
      scriptId: PROJECT_ID,
      versionId: null,
      newHash: sample[1] ?? '',
      originalHash: sample[0] ?? '',
      distinctHashes: 3_300,
      sampleHashes: sample,
    };
    const embed = buildEmbed({ name: 'clone_detected', projectId: PROJECT_ID, occurredAt: OCCURRED_AT, data }, 'S');
    expect(embed.fields.find((field) => field.name === 'Distinct hashes')?.value).toBe('3,300');
    expect(embed.fields.find((field) => field.name === 'Original hash')?.value).toBe(sample[0]);
    expect(embed.fields.find((field) => field.name === 'Sample (5 of 3,300)')?.value.split('\n')).toEqual(sample);
    expect(embedProblems(embed)).toEqual([]);
  });
});

describe('summary embeds (an alert storm in one embed)', () => {
  const executors = Array.from({ length: 5 }, (_, i) => ({ executor: `Exec_${i}`, firstSeenAt: OCCURRED_AT + i, previouslySeenAt: null }));
  const summary = { count: 500, firstAt: OCCURRED_AT, lastAt: OCCURRED_AT + 59, sample: executors };

  it('says how many, when the first and the last were, a sample, and what to do', () => {
    const embed = buildEmbed({ name: 'new_executor', projectId: PROJECT_ID, occurredAt: OCCURRED_AT, data: summary }, 'My Script');
    expect(embed.title).toBe('500 new executors seen');
    expect(embed.color).toBe(3447003);
    expect(embed.fields.map((field) => field.name)).toEqual(['Count', 'First', 'Last', 'Sample (5 of 500)', 'What to do']);
    expect(embed.fields[0]?.value).toBe('500');
    expect(embed.fields[3]?.value.split('\n')).toEqual(executors.map((data) => `Exec\\_${data.executor.slice(5)} (first seen ${formatUtc(data.firstSeenAt)})`));
    expect(embedProblems(embed)).toEqual([]);
  });

  it('titles key_abuse and clone_detected summaries by their count, and lists each sampled key or hash', () => {
    const keys = {
      count: 40,
      firstAt: OCCURRED_AT,
      lastAt: OCCURRED_AT,
      sample: [{ keyId: 'key_1', pattern: 'many_fingerprints' as const, count: 9, threshold: 5, windowSeconds: 3600 }],
    };
    const abuse = buildEmbed({ name: 'key_abuse', projectId: PROJECT_ID, occurredAt: OCCURRED_AT, data: keys }, 'S');
    expect(abuse.title).toBe('Suspicious use of 40 keys');
    expect(abuse.fields[3]?.value).toBe('key\\_1: Key used from many devices (9 distinct devices)');
    const clone = {
      scriptId: PROJECT_ID,
      versionId: 'ver_1',
      newHash: 'b'.repeat(16),
      originalHash: 'a'.repeat(16),
      distinctHashes: 30,
      sampleHashes: ['a'.repeat(16)],
    };
    const clones = buildEmbed(
      {
        name: 'clone_detected',
        projectId: PROJECT_ID,
        occurredAt: OCCURRED_AT,
        data: { count: 29, firstAt: OCCURRED_AT, lastAt: OCCURRED_AT, sample: [clone] },
      },
      'S',
    );
    expect(clones.title).toBe('29 possible clones detected');
    expect(clones.fields[3]).toEqual({
      name: 'Sample (1 of 29)',
      value: `${'b'.repeat(16)} (script ${PROJECT_ID.replace('_', '\\_')}, ver\\_1)`,
      inline: false,
    });
  });

  it('stays within every Discord limit when every sampled text is huge', () => {
    const huge = '😀_'.repeat(5000);
    const sample = Array.from({ length: 5 }, () => ({ executor: huge, firstSeenAt: OCCURRED_AT, previouslySeenAt: null }));
    const embed = buildEmbed(
      { name: 'new_executor', projectId: PROJECT_ID, occurredAt: OCCURRED_AT, data: { count: 1_000_000, firstAt: OCCURRED_AT, lastAt: OCCURRED_AT, sample } },
      huge,
    );
    expect(embedProblems(embed)).toEqual([]);
    expect(embed.title).toBe('1,000,000 new executors seen');
  });
});

describe('markdown in names', () => {
  it('escapes markdown characters so a name cannot break the bold description', () => {
    const embed = buildEmbed(deployed(), '**Evil** _name_ `x` ~~y~~ ||z|| > q \\ [a](b)');
    expect(embed.description).toBe(`**\\*\\*Evil\\*\\* \\_name\\_ \\\`x\\\` \\~\\~y\\~\\~ \\|\\|z\\|\\| \\> q \\\\ \\[a\\](b)** (${PROJECT_ID})`);
  });

  it('turns line breaks in a name into spaces', () => {
    expect(escapeMarkdown('two\nlines\r\nhere')).toBe('two lines here');
  });

  it('shows an empty name as "Unnamed script" rather than a bare ****', () => {
    expect(buildEmbed(deployed(), '').description).toBe(`**Unnamed script** (${PROJECT_ID})`);
  });

  it('escapes an id that is not one of ours', () => {
    expect(buildEmbed({ ...deployed(), projectId: 'a_b_c' }, 'S').description).toBe('**S** (a\\_b\\_c)');
  });
});

describe('Discord limits', () => {
  it('truncate counts code points and never splits a surrogate pair', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect(truncate('😀😀😀😀', 3)).toBe('😀😀…');
  });

  it('escapeMarkdown cuts between escapes, never leaving a dangling backslash', () => {
    const cut = escapeMarkdown('a*b*c*d', 5);
    expect(codePointLength(cut)).toBeLessThanOrEqual(5);
    expect(cut).toBe('a\\*b…');
  });

  it('keeps a huge name within the description limit and the 6000 total, bold intact', () => {
    for (const event of EXAMPLES) {
      const embed = buildEmbed(event, '*'.repeat(10_000));
      expect(embedProblems(embed)).toEqual([]);
      expect(codePointLength(embed.description)).toBeLessThanOrEqual(EMBED_LIMITS.description);
      expect(embed.description).toMatch(/^\*\*(\\\*)+…\*\* \(prj_/);
    }
  });

  it('keeps every embed valid when every user-controlled text is huge', () => {
    const huge = '😀_'.repeat(5000);
    const events: ProjectEvent[] = [
      deployed({ notes: huge }),
      {
        name: 'new_executor',
        projectId: PROJECT_ID,
        occurredAt: OCCURRED_AT,
        data: { executor: huge, firstSeenAt: OCCURRED_AT, previouslySeenAt: OCCURRED_AT - 86_400 * 9 },
      },
      {
        name: 'key_abuse',
        projectId: PROJECT_ID,
        occurredAt: OCCURRED_AT,
        data: { keyId: huge, pattern: 'over_max_uses', count: 101, threshold: 100, windowSeconds: 86_400 },
      },
      {
        name: 'clone_detected',
        projectId: PROJECT_ID,
        occurredAt: OCCURRED_AT,
        data: { scriptId: huge, versionId: huge, newHash: huge, originalHash: huge, distinctHashes: 3, sampleHashes: [huge, huge, huge] },
      },
    ];
    for (const event of events) expect(embedProblems(buildEmbed(event, huge))).toEqual([]);
  });

  it('embedProblems reports what Discord would refuse', () => {
    const embed = buildEmbed(deployed(), 'S');
    expect(embedProblems({ ...embed, title: 'x'.repeat(257) })).toEqual(['title is longer than 256']);
    expect(embedProblems({ ...embed, fields: [{ name: 'a', value: '', inline: true }] })).toEqual(['fields[0].value is empty']);
    expect(
      embedProblems({
        ...embed,
        description: 'x'.repeat(4096),
        fields: [
          { name: 'a', value: 'x'.repeat(1024), inline: false },
          { name: 'b', value: 'x'.repeat(1024), inline: false },
        ],
      }),
    ).toEqual(['embed is longer than 6000 in total']);
  });
});
