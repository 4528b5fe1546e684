// Issue #20: a re-promotion that changes a memory's confidence moves the memories its relations
// reach, in the same transaction, deterministically (stage level; the rules are core's
// withPropagatedConfidence and propagateConfidence).
import type { Memory, MemoryRelation, RelationType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { memory as memoryFixture } from '../../../libs/core/src/retrieval/testing/fixtures';
import { pipeline } from './testing/promotion-pipeline';
import {
  ACME,
  bash,
  edit,
  read,
  sessionCalls,
  sessionEnded,
  T0,
  validationPassed,
  type CallSpec,
} from './testing/observer-events';

const HOUR = 3_600_000;
/**
 * The same fix each session. Its prefetch pattern is promoted after the third session at 0.8,
 * and re-promoted after the fourth at 0.867 (more evidence).
 */
const WORK: CallSpec[] = [
  read('src/a.ts'),
  read('src/b.ts'),
  edit('src/b.ts'),
  bash('npm test', 'FAIL src/a.spec.ts expected 200, got 401'),
  edit('src/a.ts'),
  bash('npm test'),
];

async function session(p: ReturnType<typeof pipeline>, index: number): Promise<void> {
  const sessionId = `s${index}`;
  const at = T0 + index * HOUR;
  await p.calls(sessionCalls(ACME, sessionId, WORK, at));
  await p.lifecycle([
    validationPassed(ACME, sessionId, at + 40_000),
    sessionEnded(ACME, sessionId, at + 60_000),
  ]);
}

function relation(relationType: RelationType, targetMemoryId: string): MemoryRelation {
  return { relationType, targetMemoryId, targetFilePath: null, confidence: 1, autoExtracted: true };
}

/**
 * Three sessions promote the prefetch pattern; then, on the memory topic, its committed version
 * gets `confidence` and `relations` (a person's feedback, another writer's links) and `others`
 * join it. The fourth session re-promotes it at 0.867.
 */
async function repromotion(
  confidence: number,
  relations: MemoryRelation[],
  others: Memory[],
  fourth: (p: ReturnType<typeof pipeline>) => Promise<void> = (p) => p.promote(),
) {
  const p = pipeline({ files: true });
  for (let i = 0; i < 3; i++) await session(p, i);
  await p.promote();
  const pattern = [...p.latest.values()].find((m) => m.memoryType === 'prefetch_pattern')!;
  expect(pattern.confidence).toBe(0.8);
  p.latest.set(pattern.memoryId, { ...pattern, confidence, relations });
  for (const other of others) p.latest.set(other.memoryId, other);
  const before = p.memories.length;
  await session(p, 3);
  await fourth(p);
  return { p, pattern, written: p.memories.slice(before) };
}

const related = (memoryId: string, confidence: number, ...relations: MemoryRelation[]) =>
  memoryFixture({ memoryId, ...ACME, confidence, relations });

describe('ProjectPromotionStage: confidence propagation of re-promotions (issue #20)', () => {
  it("should move a validates-related memory by the seed's coefficient, in the same write", async () => {
    const { p, pattern, written } = await repromotion(
      0.6,
      [relation('validates', 'b')],
      [related('b', 0.5)],
    );
    const repromoted = written.find((m) => m.memoryId === pattern.memoryId)!;
    expect(repromoted.confidence).toBe(0.867);
    // The link another writer made survives the observer's next version.
    expect(repromoted.relations).toContainEqual(relation('validates', 'b'));
    const b = written.filter((m) => m.memoryId === 'b');
    expect(b).toHaveLength(1);
    expect(b[0].confidence).toBeCloseTo(0.5 + 0.6 * (0.867 - 0.6), 10);
    expect(b[0].sourceEventIds).toContain(repromoted.eventId);
    expect(b[0].timestamp).toBe(repromoted.timestamp);
    expect(p.promotion.counters.propagated).toBe(1);
  });

  it('should move nothing when the change times the coefficient is below 0.05', async () => {
    // 0.6 · (0.867 − 0.8) = 0.04.
    const { p, written } = await repromotion(
      0.8,
      [relation('validates', 'b')],
      [related('b', 0.5)],
    );
    expect(written.map((m) => m.confidence)).toContain(0.867);
    expect(written.some((m) => m.memoryId === 'b')).toBe(false);
    expect(p.promotion.counters.propagated).toBe(0);
  });

  it('should terminate on a cycle, moving each memory once and never the re-promoted one', async () => {
    const { pattern, written } = await repromotion(
      0.3,
      [relation('validates', 'b')],
      [
        related('b', 0.5, relation('validates', 'c')),
        related('c', 0.5, relation('derived_from', 'b'), relation('supersedes', 'x')),
      ],
    );
    // Its own next version, then b and c once each; c's relation back to b does not loop, and
    // x is not on the topic.
    const moved = written.filter((m) => ['b', 'c'].includes(m.memoryId));
    expect(moved.map((m) => m.memoryId)).toEqual(['b', 'c']);
    expect(written.filter((m) => m.memoryId === pattern.memoryId)).toHaveLength(1);
    // b: 0.5 + 0.6 · 0.567; c: 0.6 of b's change.
    expect(moved[0].confidence).toBeCloseTo(0.5 + 0.6 * 0.567, 10);
    expect(moved[1].confidence).toBeCloseTo(0.5 + 0.6 * 0.6 * 0.567, 10);
  });

  it('should write the same records on a replay and on a redelivery after an abort', async () => {
    const scenario = (fourth?: (p: ReturnType<typeof pipeline>) => Promise<void>) =>
      repromotion(0.6, [relation('validates', 'b')], [related('b', 0.5)], fourth);
    const first = await scenario();
    expect(first.written.filter((m) => m.memoryId === 'b')).toHaveLength(1);
    const replayed = await scenario();
    expect(replayed.written).toEqual(first.written);
    const redelivered = await scenario(async (p) => {
      const pending = p.work.splice(0);
      await p.promotion.transform(p.delivered(pending));
      p.promotion.onAborted();
      p.work.push(...pending);
      await p.promote();
    });
    expect(redelivered.written).toEqual(first.written);
  });
});
