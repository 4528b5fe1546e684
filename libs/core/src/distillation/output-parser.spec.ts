import { describe, expect, it } from 'vitest';
import { parseDistillerOutput } from './output-parser';

const SEGMENTED = `Here is the distillation.
<observations>
Date: 2026-02-16

<segment>
<narrative>Debugged the failing refresh test. Root cause: clock skew in src/auth/clock.ts.</narrative>
<facts>
* 🔴 (09:04) Root cause of the failing refresh test: clock skew in src/auth/clock.ts, not the cache TTL
* 🟡 (09:05) Modified src/auth/clock.ts to read time through an injectable clock
</facts>
</segment>

<segment>
<narrative>Switched the auth tests to fake timers.</narrative>
<facts>
* 🔴 (09:07) Decision: fake timers instead of real sleeps in auth tests, because CI machines are slow
* 🟢 (09:08) Considered covering the logout path; not decided
</facts>
</segment>
</observations>

<current-task>
Primary: auth test suite stabilisation
</current-task>

<suggested-response>
Session completed normally.
</suggested-response>`;

describe('parseDistillerOutput', () => {
  it('should read segments, narratives, facts with priorities and times, task and response', () => {
    const parsed = parseDistillerOutput(SEGMENTED);
    expect(parsed.status).toBe('segments');
    expect(parsed.issues).toEqual([]);
    expect(parsed.truncated).toBe(false);
    expect(parsed.date).toBe('2026-02-16');
    expect(parsed.factCount).toBe(4);
    expect(parsed.segments).toHaveLength(2);
    expect(parsed.segments[0].narrative).toBe(
      'Debugged the failing refresh test. Root cause: clock skew in src/auth/clock.ts.',
    );
    expect(parsed.segments[0].facts[0]).toEqual({
      priority: '🔴',
      time: '09:04',
      text: 'Root cause of the failing refresh test: clock skew in src/auth/clock.ts, not the cache TTL',
    });
    expect(parsed.segments[1].facts.map((f) => f.priority)).toEqual(['🔴', '🟢']);
    expect(parsed.currentTask).toBe('Primary: auth test suite stabilisation');
    expect(parsed.suggestedResponse).toBe('Session completed normally.');
  });

  it('should read the flat format as one segment without a narrative', () => {
    const parsed = parseDistillerOutput(
      '<observations>\nDate: 2026-02-16\n\n* 🔴 (09:15) User stated slog is for infra changes only\n* 🟡 (09:20) Worker restarted\n</observations>',
    );
    expect(parsed.status).toBe('flat');
    expect(parsed.segments).toEqual([
      {
        title: null,
        narrative: null,
        facts: [
          { priority: '🔴', time: '09:15', text: 'User stated slog is for infra changes only' },
          { priority: '🟡', time: '09:20', text: 'Worker restarted' },
        ],
      },
    ]);
  });

  it('should fall back to list items with priority markers when there is no observations block', () => {
    const parsed = parseDistillerOutput(
      'Sure! Observations:\n- 🔴 Never mock the database in integration tests\n1. 🟡 (10:01) Edited src/db/pool.ts\nSome closing chatter.\n(10:02) 🟢 Maybe look at pooling later',
    );
    expect(parsed.status).toBe('list-fallback');
    expect(parsed.segments[0].facts).toEqual([
      { priority: '🔴', time: null, text: 'Never mock the database in integration tests' },
      { priority: '🟡', time: '10:01', text: 'Edited src/db/pool.ts' },
      { priority: '🟢', time: '10:02', text: 'Maybe look at pooling later' },
    ]);
    expect(parsed.issues).toEqual(['no <observations> block; recovered 3 marked lines']);
  });

  it('should recover what came before the cut from truncated output and say so', () => {
    const cut = SEGMENTED.slice(
      0,
      SEGMENTED.indexOf('CI machines are slow') + 'CI machines'.length,
    );
    const parsed = parseDistillerOutput(cut);
    expect(parsed.truncated).toBe(true);
    expect(parsed.status).toBe('segments');
    // The first segment is whole; the second keeps its narrative, and the fact cut mid-line goes.
    expect(parsed.segments).toHaveLength(2);
    expect(parsed.segments[0].facts).toHaveLength(2);
    expect(parsed.segments[1].narrative).toBe('Switched the auth tests to fake timers.');
    expect(parsed.segments[1].facts).toEqual([]);
    expect(parsed.issues).toContain(
      'dropped the last fact line: the output ends in the middle of it',
    );
    expect(parsed.issues.some((issue) => issue.includes('<observations> is not closed'))).toBe(
      true,
    );
    expect(parsed.currentTask).toBeNull();
  });

  it('should report empty output as empty, for undefined, null, blanks and fences', () => {
    for (const raw of [undefined, null, '', '   \n\t ', '```\n```']) {
      const parsed = parseDistillerOutput(raw);
      expect(parsed.status).toBe('empty');
      expect(parsed.segments).toEqual([]);
      expect(parsed.issues).toEqual(['empty output']);
    }
  });

  it('should report an observations block without facts as empty', () => {
    const parsed = parseDistillerOutput('<observations>\nDate: 2026-02-16\n</observations>');
    expect(parsed.status).toBe('empty');
    expect(parsed.issues).toContain('observations block holds no fact or narrative');
  });

  it('should report malformed output without tags or markers as unparseable, never throwing', () => {
    const inputs = [
      'I could not find anything noteworthy in this session.',
      '<observations',
      '</segment></facts><<>>',
      '{"observations": ["json instead of tags"]}',
      '<segment><segment><facts></narrative>',
      '\u0000\uFFFF🔴',
    ];
    for (const raw of inputs) {
      const parsed = parseDistillerOutput(raw);
      expect(['unparseable', 'empty', 'segments']).toContain(parsed.status);
      expect(parsed.factCount).toBe(0);
      expect(parsed.issues.length).toBeGreaterThan(0);
    }
    expect(parseDistillerOutput(inputs[0]).status).toBe('unparseable');
  });

  it('should remove fact times that the transcript does not contain', () => {
    const parsed = parseDistillerOutput(SEGMENTED, { knownTimes: new Set(['09:04', '09:07']) });
    const times = parsed.segments.flatMap((s) => s.facts.map((f) => f.time));
    expect(times).toEqual(['09:04', null, '09:07', null]);
    expect(parsed.issues).toContain('1 fact times not in the transcript were removed');
  });

  it('should keep unmarked bullets inside <facts> as 🟡 and facts outside segments as a segment', () => {
    const parsed = parseDistillerOutput(
      '<observations><segment><narrative>Fixed CI.</narrative><facts>\n- pinned node to 20.19\n* 🔴 CI needs NODE_OPTIONS=--max-old-space-size=4096\n</facts></segment>\n* 🟡 (11:00) stray fact\n</observations>',
    );
    expect(parsed.segments[0].facts).toEqual([
      { priority: '🟡', time: null, text: 'pinned node to 20.19' },
      { priority: '🔴', time: null, text: 'CI needs NODE_OPTIONS=--max-old-space-size=4096' },
    ]);
    expect(parsed.segments[1]).toEqual({
      title: null,
      narrative: null,
      facts: [{ priority: '🟡', time: '11:00', text: 'stray fact' }],
    });
    expect(parsed.issues).toEqual([
      '1 fact lines without a priority marker kept as 🟡',
      '1 fact lines outside any <segment>; kept as a segment',
    ]);
  });

  it('should tolerate code fences, upper-case tags, attributes, titles and segments without a wrapper', () => {
    const parsed = parseDistillerOutput(
      '```xml\n<SEGMENT title="Release prep">\n<Narrative>Prepared the 2.1 release.</Narrative>\n<facts>\n* 🟡 Bumped version in package.json\n</facts>\n</SEGMENT>\n```',
    );
    expect(parsed.status).toBe('segments');
    expect(parsed.segments[0].title).toBe('Release prep');
    expect(parsed.segments[0].narrative).toBe('Prepared the 2.1 release.');
    expect(parsed.segments[0].facts).toHaveLength(1);
    expect(parsed.issues).toEqual(['no <observations> block; read the <segment> blocks directly']);
  });

  it('should drop duplicate facts and segments without content', () => {
    const parsed = parseDistillerOutput(
      '<observations><segment></segment><segment><facts>\n* 🔴 Same fact\n* 🔴 same fact\n</facts></segment></observations>',
    );
    expect(parsed.segments).toHaveLength(1);
    expect(parsed.segments[0].facts).toHaveLength(1);
    expect(parsed.issues).toContain('segment 1 has no narrative and no facts; dropped');
  });

  it('should parse a segment whose narrative is not closed', () => {
    const parsed = parseDistillerOutput(
      '<observations><segment><narrative>Started the migration.\n<facts>\n* 🔴 Migrations run with `npm run db:migrate`\n</facts></segment></observations>',
    );
    expect(parsed.segments[0].narrative).toBe('Started the migration.');
    expect(parsed.segments[0].facts).toHaveLength(1);
    expect(parsed.truncated).toBe(true);
  });
});
