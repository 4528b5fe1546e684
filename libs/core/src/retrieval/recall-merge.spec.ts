import type { MemoryType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { fuseCandidates } from './fusion';
import { NEUTRAL_USE, scoreSubject } from './hybrid-score';
import { modelVector } from './model-vector';
import type { Provenance } from './provenance';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { contentStems, mergeAcrossTiers, queryCoverage, type MergeableHit } from './recall-merge';
import type { RecallTier } from './recall-request';
import type { RankedHit } from './rrf';
import { NOW } from './testing/fixtures';
import type { UniversalPhase } from './universal-phase';

interface Hit extends MergeableHit {
  text: string;
  confidence: number | null;
}

/**
 * A hit of a tier, scored by the core from its place in its tier (fusedNormalised, lexical only)
 * with equal priors: its text, its events, and for memories a confidence.
 */
function hit(
  tier: RecallTier,
  id: string,
  fusedNormalised: number,
  text: string,
  provenance: Partial<Provenance> = {},
  confidence: number | null = tier === 'memories' ? 0.8 : null,
): Hit {
  const score = scoreSubject(
    { id, memoryType: null, lastAccessedAt: NOW, accessCount: 0, stale: false, use: NEUTRAL_USE },
    {
      basis: 'query',
      fused: {
        id,
        bm25: 1,
        bm25Rank: 1,
        knn: 0,
        knnRank: 0,
        cosineStatus: 'no_query_vector',
        fused: fusedNormalised,
        fusedNormalised,
        relevance: fusedNormalised,
      },
    },
    { phase: 'explore', now: NOW, maxAccessCount: 0 },
    CONFIG,
  );
  return {
    tier,
    id,
    score,
    text,
    confidence,
    provenance: {
      tenantId: 't',
      projectId: 'p',
      sessionIds: ['s'],
      episodeIds: [],
      promptIds: [],
      eventIds: [],
      memoryId: null,
      commitSha: null,
      ...provenance,
    },
  };
}

function merge(query: string, lists: Hit[][], k = 10) {
  return mergeAcrossTiers<Hit>(
    { lists, k, query, textOf: (h) => h.text, confidenceOf: (h) => h.confidence },
    CONFIG,
  );
}

const ids = (groups: ReturnType<typeof merge>) => groups.map((g) => g.representative.id);

describe('query coverage', () => {
  it('should weigh the query words by their rarity among the candidates', () => {
    const docs = ['fake timers refresh', 'refresh token', 'refresh page'].map(contentStems);
    const [all, one, none] = queryCoverage(contentStems('the fake refresh timer'), [
      docs[0],
      docs[1],
      contentStems('nothing here'),
    ]);
    expect(all).toBe(1); // stems: "timers" and "timer" are one word
    expect(one).toBeGreaterThan(0);
    expect(one).toBeLessThan(0.5); // "refresh" is in most candidates: it says little
    expect(none).toBe(0);
    expect(queryCoverage(contentStems('the and of'), docs)).toEqual([0, 0, 0]);
  });

  it('should skip blobs, on which Porter2 is quadratic (issue #19)', () => {
    const started = performance.now();
    const found = contentStems(`refresh ${'aB3'.repeat(20_000)} tokens`);
    expect(performance.now() - started).toBeLessThan(500);
    expect([...found]).toEqual(['refresh', 'token']);
  });
});

describe('mergeAcrossTiers', () => {
  it('should put every tier on one scale: the result with the query words first, whatever its rank in its tier', () => {
    // each is first in its own tier; only the memory says what was asked
    const merged = merge('fake timers in the refresh tests', [
      [hit('memories', 'm1', 0.9, 'use vitest fake timers in the refresh tests')],
      [hit('turns', 't1', 1, 'the refresh button is broken', { eventIds: ['p-9'] })],
    ]);
    expect(ids(merged)).toEqual(['m1', 't1']);
    expect(merged[0].score.relevance).toBeGreaterThan(merged[1].score.relevance);
    expect(merged[0].coverage).toBe(1);
  });

  it('should collapse an episode, its own turns and the memory distilled from them into one result', () => {
    const merged = merge('refresh token race', [
      [hit('memories', 'm1', 0.9, 'refresh token race: take the mutex', { eventIds: ['p-2'] })],
      [
        hit('episodes', 'e1', 1, 'refresh token race with logout', {
          episodeIds: ['e1'],
          promptIds: [1, 2, 3],
          eventIds: ['p-1', 'p-2', 'p-3'],
        }),
      ],
      [
        hit('turns', 't1', 1, 'the refresh token race again', {
          promptIds: [1],
          eventIds: ['p-1'],
        }),
        hit('turns', 't3', 0.9, 'refresh token race', { promptIds: [3], eventIds: ['p-3'] }),
        hit('turns', 't9', 0.5, 'refresh the token list', { promptIds: [9], eventIds: ['p-9'] }),
      ],
    ]);
    expect(merged).toHaveLength(2);
    const [group, other] = merged;
    expect(group.members.map((m) => m.id).sort()).toEqual(['e1', 'm1', 't1', 't3']);
    // the memory states the lesson: shown while within the band of the best member
    expect(group.representative.id).toBe('m1');
    expect(group.best.id).toBe('e1'); // ties with t1: the episode before the turn
    expect(group.finalScore).toBeGreaterThan(group.score.finalScore); // ranked by its best
    expect(group.provenance).toMatchObject({ episodeIds: ['e1'], promptIds: [1, 2, 3] });
    expect([...group.provenance.eventIds].sort()).toEqual(['p-1', 'p-2', 'p-3']);
    expect(other.representative.id).toBe('t9');
  });

  it('should show the best member when no memory scores within the band of it', () => {
    const merged = merge('refresh token race logout', [
      [hit('memories', 'm1', 0.2, 'a template: modified token.ts', { eventIds: ['p-1'] })],
      [hit('turns', 't1', 1, 'refresh token race with logout', { eventIds: ['p-1'] })],
    ]);
    expect(merged).toHaveLength(1);
    expect(merged[0].representative.id).toBe('t1');
    expect(merged[0].best.id).toBe('t1');
  });

  it('should never weld two episodes into one result through a memory spanning both', () => {
    // a work state (or a fact reinforced in two sessions) carries the events of both episodes
    const span = hit('memories', 'w', 1, 'auth token refresh: step 2 of 4', {
      eventIds: ['a-1', 'b-1'],
    });
    const merged = merge('auth token refresh', [
      [span],
      [
        hit('episodes', 'ea', 0.9, 'auth token refresh race', {
          episodeIds: ['ea'],
          eventIds: ['a-1'],
        }),
        hit('episodes', 'eb', 0.8, 'auth token refresh mutex', {
          episodeIds: ['eb'],
          eventIds: ['b-1'],
        }),
      ],
    ]);
    expect(merged.map((g) => g.members.map((m) => m.id))).toEqual([['w', 'ea'], ['eb']]);
    expect(merged[1].provenance.eventIds).toEqual(['b-1']);
  });

  it('should never group memories with each other: two memories of one prompt are two statements', () => {
    const merged = merge('refresh token', [
      [
        hit('memories', 'm-gotcha', 1, 'refresh token needs the mutex', { eventIds: ['p-1'] }),
        hit('memories', 'm-decision', 0.9, 'refresh token moved to the session', {
          eventIds: ['p-1'],
        }),
      ],
    ]);
    expect(ids(merged)).toEqual(['m-gotcha', 'm-decision']);
  });

  it('should leave the relevance as ranked when the query has no content word to cover', () => {
    const t = hit('turns', 't1', 0.8, 'how is it', { eventIds: ['p-1'] });
    const [only] = merge('how is it', [[t]]);
    expect(only.score.relevance).toBe(t.score.relevance);
    expect(only.finalScore).toBeCloseTo(t.score.finalScore, 12);
  });

  it('should keep k results, ties by relevance, then tier order, then id', () => {
    const same = (tier: RecallTier, id: string, event: string) =>
      hit(tier, id, 1, 'refresh token', { eventIds: [event] }, null);
    const merged = merge(
      'refresh token',
      [[same('turns', 't2', 'x2'), same('turns', 't1', 'x1')], [same('episodes', 'e1', 'x3')]],
      2,
    );
    expect(ids(merged)).toEqual(['e1', 't1']);
  });

  describe('with embeddings: coverage never sinks a paraphrase', () => {
    interface Doc {
      id: string;
      tier: RecallTier;
      text: string;
      memoryType: MemoryType | null;
    }

    /**
     * Each tier fused as the service fuses it (its BM25 list, its kNN list with the index's
     * cosines, a query vector), then scored in `phase`: the real pipeline without Elasticsearch.
     */
    function ranked(
      phase: UniversalPhase,
      tiers: { docs: Doc[]; bm25: string[]; knn: [string, number][] }[],
    ): Hit[][] {
      return tiers.map(({ docs, bm25, knn }) => {
        const fused = fuseCandidates(
          {
            bm25: bm25.map((id): RankedHit => ({ id })),
            knn: knn.map(([id, similarity]): RankedHit => ({ id, similarity })),
            query: modelVector('test-model', [1, 0, 0]),
            vectorOf: () => null,
          },
          CONFIG,
        );
        return fused.map((candidate) => {
          const doc = docs.find((d) => d.id === candidate.id)!;
          const score = scoreSubject(
            {
              id: doc.id,
              memoryType: doc.memoryType,
              lastAccessedAt: NOW,
              accessCount: 0,
              stale: false,
              use: 0.8,
            },
            { basis: 'query', fused: candidate },
            { phase, now: NOW, maxAccessCount: 0 },
            CONFIG,
          );
          const confidence = doc.tier === 'memories' ? 0.8 : null;
          return { ...hit(doc.tier, doc.id, 0, doc.text, {}, confidence), score };
        });
      });
    }

    const memory = (id: string, memoryType: MemoryType, text: string): Doc => ({
      id,
      tier: 'memories',
      text,
      memoryType,
    });

    // The integration corpus (test/integration/recall.test.ts) as Elasticsearch and MiniLM saw
    // it: the paraphrase has no word of the query and the best cosine (kNN #1); the Kafka memory
    // is second of the BM25 list only through "when", and a far weaker neighbour (kNN #3).
    const QUERY = 'database runs out of sockets when traffic spikes';
    const corpus = (pool: MemoryType, kafka: MemoryType) => [
      {
        docs: [
          memory(
            'm-pool',
            pool,
            'Postgres connection pool exhausted under load; raise max connections in pgbouncer',
          ),
          memory(
            'm-kafka',
            kafka,
            'Kafka consumer groups rebalance when a member leaves; commit offsets before shutdown',
          ),
          memory(
            'm-neo4j',
            'decision',
            'Graph writes use MERGE on natural keys so a replay changes nothing',
          ),
          memory('m-notes', 'pattern', 'Roll out the release notes when the tag is pushed'),
        ],
        bm25: ['m-notes', 'm-kafka'],
        knn: [
          ['m-pool', 0.3822],
          ['m-neo4j', 0.2353],
          ['m-kafka', 0.2168],
        ] as [string, number][],
      },
    ];

    it('should rank the kNN-only paraphrase with the clearly best cosine first, whatever the phase table favours', () => {
      for (const [pool, kafka] of [
        ['gotcha', 'pattern'],
        ['pattern', 'gotcha'],
      ] as const) {
        const merged = merge(QUERY, ranked('implement', corpus(pool, kafka)));
        expect(ids(merged)[0]).toBe('m-pool');
        const [paraphrase] = merged;
        const kafkaGroup = merged.find((g) => g.representative.id === 'm-kafka')!;
        expect(paraphrase.coverage).toBe(0);
        // The lexical reading alone (coverage 0 against a stop-word BM25 rank) ranked it below:
        // the bug. The semantic reading (best cosine of all candidates) is what it stands on.
        expect(paraphrase.relevance.lexical).toBeLessThan(kafkaGroup.relevance.lexical);
        expect(paraphrase.relevance).toMatchObject({ cosineRank: 1 });
        expect(paraphrase.score.relevance).toBe(paraphrase.relevance.semantic);
        // relevance, not the phase table, puts it first
        expect(paraphrase.score.relevance).toBeGreaterThan(kafkaGroup.score.relevance * 1.1);
      }
    });

    it('should leave a full lexical match on its lexical relevance, above a closer-sounding paraphrase', () => {
      const docs = [
        memory(
          'm-ossl',
          'error_pattern',
          'ERR_OSSL_EVP_UNSUPPORTED from webpack 4: set NODE_OPTIONS',
        ),
        memory('m-tls', 'gotcha', 'OpenSSL 3 refuses the legacy hash algorithm of the old bundler'),
      ];
      const merged = merge(
        'ERR_OSSL_EVP_UNSUPPORTED webpack',
        ranked('implement', [
          {
            docs,
            bm25: ['m-ossl'],
            knn: [
              ['m-tls', 0.45],
              ['m-ossl', 0.4],
            ],
          },
        ]),
      );
      expect(ids(merged)).toEqual(['m-ossl', 'm-tls']);
      expect(merged[0].coverage).toBe(1);
      expect(merged[0].score.relevance).toBe(merged[0].relevance.lexical);
    });

    it('should rank cosines across tiers: the best neighbour of a weak tier is not a first-rank one', () => {
      const lists = ranked('explore', [
        {
          docs: [memory('m-pool', 'gotcha', 'Postgres connection pool exhausted under load')],
          bm25: [],
          knn: [['m-pool', 0.6]],
        },
        {
          docs: [
            {
              id: 't-lunch',
              tier: 'turns',
              text: 'ship the hotfix before lunch',
              memoryType: null,
            },
          ],
          bm25: [],
          knn: [['t-lunch', 0.25]], // first of its tier's kNN list, far from the query
        },
      ]);
      const merged = merge(QUERY, lists);
      expect(ids(merged)).toEqual(['m-pool', 't-lunch']);
      expect(merged[1].relevance.cosineRank).toBe(2);
      // as fusion would weigh a kNN hit of rank 2, not its rank 1 in the turns tier
      expect(merged[1].relevance.semantic).toBeLessThan(lists[1][0].score.relevance);
    });
  });
});
