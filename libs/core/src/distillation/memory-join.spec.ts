import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { distillExtractively } from './extractive/extractive-distiller';
import { distillationToMemories } from './memories';
import {
  joinAllMemoryVersions,
  joinMemoryVersions,
  MAX_PROVENANCE_IDS,
  normaliseMemoryVersion,
} from './memory-join';
import { debuggingSession } from './testing/session-builder';
import { distillationWindow } from './triggers';

/** The versions the extractive distiller makes of one debugging session's facts. */
function sessionVersions(sessionId: string, start: number, episodeId: string | null): Memory[] {
  const session = debuggingSession(start);
  const decision = distillationWindow(session.episodeClosed(1, 6, 'ep'), session.events());
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return distillationToMemories({ ...distillExtractively(decision.window), sessionId })
    .filter((m) => m.memoryType !== 'work_state')
    .map((m) => ({ ...m, episodeId }));
}

/** Versions of one memory id from several sessions, with differing provenance and scalars. */
function versionsOfOneFact(): Memory[] {
  const first = sessionVersions('s-a', Date.UTC(2026, 0, 5), 'ep-a');
  const memoryId = first[0].memoryId;
  const pick = (versions: Memory[]) => versions.find((m) => m.memoryId === memoryId)!;
  const a = pick(first);
  const b = pick(sessionVersions('s-b', Date.UTC(2026, 0, 3), 'ep-b'));
  const c = pick(sessionVersions('s-c', Date.UTC(2026, 0, 3), null));
  return [
    a,
    { ...b, content: b.content.toUpperCase(), confidence: 0.5, needsReview: false },
    { ...c, tags: [...c.tags, 'kind:extra'], accessCount: 3, userVerified: true },
    { ...a, eventId: 'redelivered-under-another-id', relatedFiles: ['z/last.ts', 'a/first.ts'] },
  ];
}

/** mulberry32: the same permutations on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A random order of the versions, some of them delivered several times. */
function shuffledWithDuplicates(versions: readonly Memory[], next: () => number): Memory[] {
  const delivered = [...versions, ...versions.filter(() => next() < 0.5)];
  for (let i = delivered.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [delivered[i], delivered[j]] = [delivered[j], delivered[i]];
  }
  return delivered;
}

/** Joins in a random tree shape, not only left to right (associativity). */
function joinInRandomTree(versions: Memory[], next: () => number): Memory {
  let pending = versions.map(normaliseMemoryVersion);
  while (pending.length > 1) {
    const i = Math.floor(next() * (pending.length - 1));
    pending = [
      ...pending.slice(0, i),
      joinMemoryVersions(pending[i], pending[i + 1]),
      ...pending.slice(i + 2),
    ];
  }
  return pending[0];
}

describe('joinMemoryVersions', () => {
  const versions = versionsOfOneFact();
  const reference = joinAllMemoryVersions(versions)!;

  it('should give the same memory for any order, duplication and grouping of the versions', () => {
    const next = random(19);
    for (let run = 0; run < 200; run++) {
      const delivered = shuffledWithDuplicates(versions, next);
      expect(joinAllMemoryVersions(delivered)).toEqual(reference);
      expect(joinInRandomTree(delivered, next)).toEqual(reference);
    }
  });

  it('should change nothing when a version already joined arrives again', () => {
    for (const version of versions) {
      expect(joinMemoryVersions(reference, version)).toEqual(reference);
      expect(joinMemoryVersions(version, reference)).toEqual(reference);
    }
    expect(joinMemoryVersions(reference, reference)).toEqual(reference);
  });

  it('should keep the provenance of every session, sorted', () => {
    expect(reference.provenanceSessionIds).toEqual(['s-a', 's-b', 's-c']);
    const events = [...new Set(versions.flatMap((v) => v.sourceEventIds))].sort();
    expect(reference.sourceEventIds).toEqual(events);
    expect(reference.relatedFiles).toEqual([...reference.relatedFiles].sort());
    expect(reference.relatedFiles).toEqual(expect.arrayContaining(['a/first.ts', 'z/last.ts']));
    expect(reference.tags).toContain('kind:extra');
    expect(reference.tags).toEqual([...reference.tags].sort());
  });

  it('should take content from the earliest version, preferring one that names its episode', () => {
    // s-b and s-c are both earliest; s-b names its episode, s-c does not.
    expect(reference.sessionId).toBe('s-b');
    expect(reference.episodeId).toBe('ep-b');
    expect(reference.content).toBe(versions[1].content);
    expect(reference.createdAt).toBe(Math.min(...versions.map((v) => v.createdAt)));
    expect(reference.timestamp).toBe(Math.max(...versions.map((v) => v.timestamp)));
    expect(reference.lastAccessedAt).toBe(Math.max(...versions.map((v) => v.lastAccessedAt)));
    expect(reference.accessCount).toBe(3);
  });

  it('should keep the highest confidence, and need review only if every version does', () => {
    expect(reference.confidence).toBe(Math.max(...versions.map((v) => v.confidence)));
    expect(reference.needsReview).toBe(false);
    expect(reference.userVerified).toBe(true);
    const allNeedReview = versions.map((v) => ({ ...v, needsReview: true }));
    expect(joinAllMemoryVersions(allNeedReview)!.needsReview).toBe(true);
  });

  it('should derive the event id from the joined state', () => {
    const [a, b] = versions;
    expect(joinMemoryVersions(a, b).eventId).toBe(joinMemoryVersions(b, a).eventId);
    expect(joinMemoryVersions(a, b).eventId).not.toBe(normaliseMemoryVersion(a).eventId);
    expect(normaliseMemoryVersion(a).eventId).toBe(
      normaliseMemoryVersion({ ...a, eventId: 'other' }).eventId,
    );
  });

  it('should bound the provenance ids to the smallest, whatever the order', () => {
    const [a] = versions;
    const many = Array.from({ length: 3 * MAX_PROVENANCE_IDS }, (_, i) => ({
      ...a,
      sourceEventIds: [`e-${String(i).padStart(4, '0')}`],
    }));
    const joined = joinAllMemoryVersions(many)!;
    expect(joined.sourceEventIds).toHaveLength(MAX_PROVENANCE_IDS);
    expect(joined.sourceEventIds[0]).toBe('e-0000');
    expect(joinAllMemoryVersions([...many].reverse())).toEqual(joined);
  });

  it('should refuse to join two different memories', () => {
    const [a] = versions;
    expect(() => joinMemoryVersions(a, { ...a, memoryId: 'other' })).toThrow(/cannot join/);
  });
});
