import { describe, expect, it } from 'vitest';
import type { GraphCoAccessEdgeEvidence, GraphNeighbourEvidence } from '../ports/observer-graph';
import { neighbourEvidenceQuery, rankFileNeighbours } from './file-prediction';

const edge = (file: string, sessionCount: number, rawCount: number): GraphCoAccessEdgeEvidence => ({
  file,
  weight: 0.5,
  rawCount,
  sessionCount,
  avgTimeDeltaMs: 1_000,
  direction: 'both',
  lastObservedAt: 1,
  observed: true,
});

describe('rankFileNeighbours', () => {
  it('should rank by sessions with both files, not by the edge weight alone', () => {
    // b: 3 of a's 4 sessions (weight low: b is everywhere); c: 1 session, weight 1.
    const evidence: GraphNeighbourEvidence = {
      projectSessions: 10,
      querySessions: 4,
      files: [
        { file: 'b', sessions: 9, withQuery: 3 },
        { file: 'c', sessions: 1, withQuery: 1 },
      ],
      edges: [
        { ...edge('c', 1, 1), weight: 1 },
        { ...edge('b', 3, 5), weight: 0.3 },
      ],
    };
    const ranked = rankFileNeighbours('a', evidence, 5);
    expect(ranked.map((n) => n.file)).toEqual(['b', 'c']);
    expect(ranked[0].score).toBeCloseTo((3 + 0.9) / 5, 12);
    expect(ranked[1]).toMatchObject({ weight: 1, rawCount: 1, source: 'co_access' });
  });

  it('should fill the list with the most-touched files when the file is unknown', () => {
    const evidence: GraphNeighbourEvidence = {
      projectSessions: 4,
      querySessions: 0,
      files: [
        { file: 'x', sessions: 1, withQuery: 0 },
        { file: 'y', sessions: 3, withQuery: 0 },
      ],
      edges: [],
    };
    const ranked = rankFileNeighbours('new.ts', evidence, 5);
    expect(ranked).toMatchObject([
      { file: 'y', source: 'frequent', weight: 0, rawCount: 0, direction: 'both', fileSessions: 3 },
      { file: 'x', source: 'frequent' },
    ]);
    expect(ranked[0].score).toBeCloseTo(0.75, 12);
  });

  it('should put one session of evidence above popularity, and break ties by raw count', () => {
    const evidence: GraphNeighbourEvidence = {
      projectSessions: 5,
      querySessions: 1,
      files: [
        { file: 'popular', sessions: 5, withQuery: 0 },
        { file: 'p', sessions: 1, withQuery: 1 },
        { file: 'q', sessions: 1, withQuery: 1 },
        { file: 's', sessions: 1, withQuery: 1 },
      ],
      edges: [edge('q', 1, 3), edge('p', 1, 1)],
    };
    const ranked = rankFileNeighbours('a', evidence, 3);
    expect(ranked.map((n) => [n.file, n.source])).toEqual([
      ['q', 'co_access'],
      ['p', 'co_access'],
      ['s', 'same_session'],
    ]);
  });

  it('should never return the query file, and say co_commit for edges only commits made', () => {
    const evidence: GraphNeighbourEvidence = {
      projectSessions: 2,
      querySessions: 2,
      files: [
        { file: 'a', sessions: 2, withQuery: 2 },
        { file: 'b', sessions: 2, withQuery: 2 },
      ],
      edges: [{ ...edge('b', 2, 2), observed: false }],
    };
    expect(rankFileNeighbours('a', evidence, 5)).toMatchObject([
      { file: 'b', source: 'co_commit' },
    ]);
    expect(rankFileNeighbours('a', evidence, 0)).toEqual([]);
  });

  it('should ask the store for k popular files and the default session window', () => {
    expect(neighbourEvidenceQuery({ tenantId: 't', projectId: 'p', path: 'a', k: 5 })).toEqual({
      tenantId: 't',
      projectId: 'p',
      path: 'a',
      popular: 5,
      sessionWindow: 200,
    });
  });
});
