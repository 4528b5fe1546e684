import { describe, expect, it } from 'vitest';
import type { BenchTurn } from '../../bench/quality/recall/dataset';
import { scoreEvidence, type ResultProvenance } from '../../bench/quality/recall/score';

const turn = (promptId: number): BenchTurn =>
  ({ eventId: `e${promptId}`, sessionId: 's', promptId, text: '' }) as unknown as BenchTurn;
const single = (promptId: number): ResultProvenance => ({
  sessionIds: ['s'],
  promptIds: [promptId],
  eventIds: [`e${promptId}`],
});
const conversation = (from: number, to: number): ResultProvenance => {
  const ids = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return { sessionIds: ['s'], promptIds: ids, eventIds: ids.map((id) => `e${id}`) };
};

describe('scoreEvidence', () => {
  it('should find evidence by provenance within the first k results, with its rank', () => {
    const scores = scoreEvidence([single(1), single(2), single(7)], [turn(7)]);
    expect(scores).toMatchObject({ recall5: 1, recall10: 1, recall10Turns: 1 });
    expect(scores.mrr).toBeCloseTo(1 / 3);
  });

  it('should charge a result the turns it cites: a whole conversation is no free hit', () => {
    const scores = scoreEvidence([conversation(1, 30)], [turn(7)]);
    expect(scores.recall5).toBe(1);
    expect(scores.recall10Turns).toBe(0);
    expect(scores.citedTurns5).toBe(30);
  });

  it('should count a short episode within the turn budget', () => {
    const scores = scoreEvidence([single(1), conversation(5, 8), single(9)], [turn(7), turn(9)]);
    expect(scores.recall10Turns).toBe(1);
    expect(scores.citedTurns5).toBe(2);
  });
});
