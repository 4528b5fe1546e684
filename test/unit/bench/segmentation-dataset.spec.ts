import { decodeReplayLine } from '@engram/contracts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLOSINGS,
  FAMILIES,
  GENERIC_CORRECTIONS,
  GENERIC_DISCUSSION_FOLLOWUPS,
  GENERIC_FOLLOWUPS,
  RESUMES,
  TERSE_CONTINUATIONS,
} from '../../bench/segmentation/families';
import {
  benchKeywords,
  drawSlots,
  ensureDataset,
  fillTemplate,
  generateDataset,
  readJsonlLines,
  wordCount,
} from '../../bench/segmentation/generate-sessions';
import { Rng } from '../../bench/segmentation/rng';
import { seedExampleFiles } from '../../bench/segmentation/run';
import type { GoldLabel } from '../../bench/segmentation/types';
import { REPOS } from '../../bench/segmentation/vocabulary';

/** The fields of PromptSubmitted (libs/contracts/src/agent-events.ts + envelope.ts), in order. */
const PROMPT_FIELDS = [
  'eventId',
  'tenantId',
  'projectId',
  'sessionId',
  'agentId',
  'userId',
  'timestamp',
  'schemaVersion',
  'promptId',
  'source',
  'channel',
  'channelKind',
  'explicitThreadId',
  'text',
  'methodology',
  'methodologyPhase',
  'workUnitRef',
  'parentEpisodeId',
];

const dataset = generateDataset();

describe('generateDataset', () => {
  it('meets the size targets with the default seed', () => {
    expect(dataset.stats.sessions).toBeGreaterThanOrEqual(300);
    expect(dataset.stats.prompts).toBeGreaterThanOrEqual(5000);
    expect(dataset.events).toHaveLength(dataset.stats.prompts);
    expect(dataset.labels).toHaveLength(dataset.stats.prompts);
    expect(dataset.stats.boundaries).toBeGreaterThan(500);
    // every hard-case category occurs
    for (const count of Object.values(dataset.stats.categories)) expect(count).toBeGreaterThan(10);
    expect(Object.keys(dataset.stats.families)).toHaveLength(FAMILIES.length);
  });

  it('is deterministic for a seed and differs between seeds', () => {
    const again = generateDataset();
    expect(JSON.stringify(again.events)).toBe(JSON.stringify(dataset.events));
    expect(JSON.stringify(again.labels)).toBe(JSON.stringify(dataset.labels));
    const other = generateDataset({ seed: 7, sessions: 20 });
    expect(other.events[0].text).not.toBe(dataset.events[0].text);
    expect(other.stats.sessions).toBe(20);
  });

  it('writes exactly the PromptSubmitted fields, which the replay decoder accepts', () => {
    dataset.events.forEach((event, index) => {
      expect(Object.keys(event)).toEqual(PROMPT_FIELDS);
      const line = JSON.stringify(event);
      const decoded = decodeReplayLine(line, index + 1, { defaultType: 'PromptSubmitted' });
      expect(decoded.key).toBe(event.sessionId);
    });
    const first = dataset.events[0];
    expect(first).toMatchObject({
      schemaVersion: 1,
      source: 'user',
      channel: 'cli',
      channelKind: 'explicit',
      explicitThreadId: first.sessionId,
      methodology: null,
      methodologyPhase: null,
      workUnitRef: null,
      parentEpisodeId: null,
    });
  });

  it('keeps sessions contiguous, ordered, under 24 h, with labels aligned to events', () => {
    const problems: string[] = [];
    const eventIds = new Set<string>();
    const seenSessions = new Set<string>();
    const span = new Map<string, [number, number]>();
    let taskLength = 0;
    dataset.events.forEach((event, index) => {
      const label = dataset.labels[index];
      const where = `#${index} (${event.sessionId} prompt ${event.promptId})`;
      if (
        label.eventId !== event.eventId ||
        label.sessionId !== event.sessionId ||
        label.promptId !== event.promptId
      ) {
        problems.push(`${where}: label not aligned`);
      }
      if (eventIds.has(event.eventId)) problems.push(`${where}: duplicate eventId`);
      eventIds.add(event.eventId);
      const [min, max] = span.get(event.sessionId) ?? [event.timestamp, event.timestamp];
      span.set(event.sessionId, [Math.min(min, event.timestamp), Math.max(max, event.timestamp)]);
      const previous = dataset.events[index - 1];
      if (previous === undefined || previous.sessionId !== event.sessionId) {
        if (seenSessions.has(event.sessionId)) problems.push(`${where}: session not contiguous`);
        if (!label.goldBoundary) problems.push(`${where}: first prompt is not a boundary`);
        seenSessions.add(event.sessionId);
        taskLength = 1;
        return;
      }
      if (event.promptId <= previous.promptId) problems.push(`${where}: promptId not increasing`);
      if (event.timestamp < previous.timestamp) problems.push(`${where}: time goes backwards`);
      taskLength = label.goldBoundary ? 1 : taskLength + 1;
      if (taskLength >= 50) problems.push(`${where}: task of 50 prompts`);
    });
    for (const [sessionId, [min, max]] of span) {
      if (max - min >= 24 * 3_600_000) problems.push(`${sessionId}: spans 24 h or more`);
    }
    expect(problems).toEqual([]);
  });

  it('labels categories consistently with the gold boundary and the text', () => {
    const problems: string[] = [];
    dataset.labels.forEach((label, index) => {
      const categories = label.categories ?? [];
      for (const category of categories) {
        if (label.goldBoundary !== category.endsWith('-boundary')) {
          problems.push(`#${index}: ${category} on goldBoundary=${label.goldBoundary}`);
        }
      }
      const isFirst = index === 0 || dataset.events[index - 1].sessionId !== label.sessionId;
      const expected = label.goldBoundary ? 'terse-boundary' : 'terse-continuation';
      if (!isFirst && wordCount(dataset.events[index].text) < 5 && !categories.includes(expected)) {
        problems.push(`#${index}: terse prompt without ${expected}`);
      }
    });
    expect(problems).toEqual([]);
  });
});

describe('templates', () => {
  it('fill every slot for every repository, module and family', () => {
    const rng = new Rng('templates');
    const shared = [
      ...GENERIC_FOLLOWUPS,
      ...GENERIC_DISCUSSION_FOLLOWUPS,
      ...GENERIC_CORRECTIONS,
      ...CLOSINGS,
      ...RESUMES,
      ...TERSE_CONTINUATIONS.map(([text]) => text),
    ];
    for (const repo of REPOS) {
      for (const module of repo.modules) {
        const slots = drawSlots(rng, repo, module);
        for (const family of FAMILIES) {
          const templates = [
            ...family.openers,
            ...(family.shortOpeners ?? []),
            ...family.followups,
            ...family.corrections,
            ...family.paraphrases,
            ...shared,
          ];
          for (const template of templates) {
            expect(fillTemplate(template, slots)).not.toMatch(/\{\w+\}/);
          }
        }
      }
    }
  });

  it('keep short openers and terse continuations under five words', () => {
    const rng = new Rng('terse');
    for (const repo of REPOS) {
      for (const module of repo.modules) {
        const slots = drawSlots(rng, repo, module);
        const short = [
          ...TERSE_CONTINUATIONS.map(([text]) => text),
          ...FAMILIES.flatMap((family) => family.shortOpeners ?? []),
        ];
        for (const text of short) expect(wordCount(fillTemplate(text, slots))).toBeLessThan(5);
      }
    }
  });

  it('throws on a slot without a value', () => {
    expect(() => fillTemplate('fix {nothing}', {})).toThrow(/nothing/);
  });

  it('extracts keywords split from identifiers and paths', () => {
    expect([
      ...benchKeywords('fix AuthGuard.canActivate in src/auth/auth.guard.ts please'),
    ]).toEqual(['fix', 'auth', 'guard', 'activate', 'src']);
  });
});

describe('ensureDataset', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-seg-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the files, reuses an intact copy and regenerates a tampered one', () => {
    const first = ensureDataset({ seed: 3, sessions: 12, cacheDir: dir });
    expect(first.reused).toBe(false);
    const lines = readJsonlLines(first.sessionsPath);
    expect(lines).toHaveLength(first.stats.prompts);
    expect(readJsonlLines(first.labelsPath)).toHaveLength(first.stats.prompts);

    const second = ensureDataset({ seed: 3, sessions: 12, cacheDir: dir });
    expect(second.reused).toBe(true);

    writeFileSync(first.sessionsPath, lines.slice(1).join('\n'));
    const third = ensureDataset({ seed: 3, sessions: 12, cacheDir: dir });
    expect(third.reused).toBe(false);
    expect(readFileSync(third.sessionsPath, 'utf8')).toBe(lines.join('\n') + '\n');

    expect(ensureDataset({ seed: 4, sessions: 12, cacheDir: dir }).reused).toBe(false);
  });
});

describe('seed 000 examples', () => {
  it('are valid PromptSubmitted lines with one label each', () => {
    const { sessionsPath, labelsPath } = seedExampleFiles();
    const events = readJsonlLines(sessionsPath);
    const labels = readJsonlLines(labelsPath).map((line) => JSON.parse(line) as GoldLabel);
    expect(events).toHaveLength(labels.length);
    events.forEach((line, index) => {
      const decoded = decodeReplayLine(line, index + 1, { defaultType: 'PromptSubmitted' });
      expect(Object.keys(JSON.parse(line) as object)).toEqual(PROMPT_FIELDS);
      expect(decoded.event).toMatchObject({
        eventId: labels[index].eventId,
        promptId: labels[index].promptId,
      });
    });
    const texts = events.map((line) => (JSON.parse(line) as { text: string }).text);
    expect(texts).toContain('5,6');
    expect(texts).toContain('fix the build bug');
  });
});
