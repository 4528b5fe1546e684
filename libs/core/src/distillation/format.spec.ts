import { describe, expect, it } from 'vitest';
import {
  episodeSummary,
  formatDistillation,
  formatSegmentsForLog,
  optimizeDistillationForContext,
  optimizeForContext,
} from './format';
import { parseDistillerOutput } from './output-parser';
import type { Distillation, DistilledFact } from './types';

function fact(
  priority: DistilledFact['priority'],
  text: string,
  time: string | null = '09:15',
): DistilledFact {
  return { priority, time, at: null, text, kind: null, sourceEventIds: [], relatedFiles: [] };
}

const DISTILLATION: Pick<Distillation, 'date' | 'segments' | 'currentTask' | 'suggestedResponse'> =
  {
    date: '2026-02-16',
    segments: [
      {
        episodeId: 'ep-1',
        title: 'Debugged registration',
        narrative: 'Debugged the worker registration failure. Fixed by removing a stale trigger.',
        facts: [
          fact('🔴', 'Two functions sharing an event trigger fail registration silently'),
          fact('🟡', 'Docker logs show the registration error', null),
          fact('🟢', 'Considered a health check'),
        ],
        sourceEventIds: [],
      },
      {
        episodeId: 'ep-2',
        title: null,
        narrative: 'Renamed events to past tense. All tests pass.',
        facts: [fact('🔴', 'Events use past-tense names')],
        sourceEventIds: [],
      },
    ],
    currentTask: 'Primary: memory ADR\nSecondary: event renames',
    suggestedResponse: 'Session completed normally.',
  };

describe('formatDistillation', () => {
  it("should write seed 001's segment format, which the parser reads back unchanged", () => {
    const text = formatDistillation(DISTILLATION);
    expect(text).toContain('<segment>\n<narrative>Debugged the worker registration failure.');
    expect(text).toContain(
      '* 🔴 (09:15) Two functions sharing an event trigger fail registration silently',
    );
    expect(text).toContain('* 🟡 Docker logs show the registration error');
    const parsed = parseDistillerOutput(text);
    expect(parsed.issues).toEqual([]);
    expect(parsed.date).toBe('2026-02-16');
    expect(parsed.currentTask).toBe(DISTILLATION.currentTask);
    expect(
      parsed.segments.map((s) => [
        s.narrative,
        s.facts.map((f) => `${f.priority}${f.time}${f.text}`),
      ]),
    ).toEqual(
      DISTILLATION.segments.map((s) => [
        s.narrative,
        s.facts.map((f) => `${f.priority}${f.time}${f.text}`),
      ]),
    );
  });
});

describe('optimizeForContext', () => {
  it('should keep only the 🔴 lines (and the date) of segment-format text', () => {
    expect(optimizeForContext(formatDistillation(DISTILLATION))).toBe(
      [
        'Date: 2026-02-16',
        '* 🔴 (09:15) Two functions sharing an event trigger fail registration silently',
        '* 🔴 (09:15) Events use past-tense names',
      ].join('\n'),
    );
  });

  it('should keep only the 🔴 lines of flat text', () => {
    expect(
      optimizeForContext('* 🔴 (09:15) keep\n* 🟡 (09:20) drop\n  - 🟢 drop too\n* 🔴 keep too'),
    ).toBe('* 🔴 (09:15) keep\n* 🔴 keep too');
  });

  it('should keep narratives but only 🔴 facts of a structured distillation', () => {
    const optimized = optimizeDistillationForContext(DISTILLATION);
    expect(optimized.segments.map((s) => s.facts.map((f) => f.priority))).toEqual([['🔴'], ['🔴']]);
    expect(optimized.segments[0].narrative).toBe(DISTILLATION.segments[0].narrative);
    expect(DISTILLATION.segments[0].facts).toHaveLength(3);
  });
});

describe('formatSegmentsForLog', () => {
  it('should render a heading, the narrative in italics and the facts per segment', () => {
    expect(formatSegmentsForLog(DISTILLATION)).toBe(
      [
        '#### Debugged registration',
        '*Debugged the worker registration failure. Fixed by removing a stale trigger.*',
        '',
        '* 🔴 (09:15) Two functions sharing an event trigger fail registration silently',
        '* 🟡 Docker logs show the registration error',
        '* 🟢 (09:15) Considered a health check',
        '',
        '#### Renamed events to past tense.',
        '*Renamed events to past tense. All tests pass.*',
        '',
        '* 🔴 (09:15) Events use past-tense names',
        '',
        '**Current task**: Primary: memory ADR · Secondary: event renames',
      ].join('\n'),
    );
  });
});

describe('episodeSummary', () => {
  it("should join the narratives of the episode's segments", () => {
    expect(episodeSummary(DISTILLATION, 'ep-2')).toBe(
      'Renamed events to past tense. All tests pass.',
    );
    expect(episodeSummary(DISTILLATION, 'ep-9')).toBeNull();
    expect(episodeSummary(DISTILLATION)).toContain('Fixed by removing a stale trigger. Renamed');
  });
});
