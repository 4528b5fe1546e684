import {
  explainScore,
  foldOutdated,
  mergeAcrossTiers,
  type CrossTierRelevance,
  type MergedGroup,
  type RankingConfig,
  type RecallQuery,
} from '@engram/core';
import { episodeText as indexedEpisodeText } from '@engram/core';
import type { RecallHit } from './recall-tier-ranking';

/**
 * The tiers' lists as one (mergeAcrossTiers): relevance on one scale for every tier, and one
 * result per source — an episode, its turns and the memories distilled from them shown once,
 * with the provenance of all of them. A result ranks by its group's best member; its score's
 * other components, and the explanation, are those of the member shown. Outdated memories are
 * folded under the current fact they belong to (foldOutdated, before the cut to k, so the slots
 * they free are refilled); a result whose shown member is outdated folds with what it shows.
 */
export function mergeRecallHits(
  query: RecallQuery,
  lists: RecallHit[][],
  config: RankingConfig,
): RecallHit[] {
  const groups = mergeAcrossTiers<RecallHit>(
    {
      lists,
      // Every group: folding cuts to k, after it frees the slots of the outdated ones.
      k: Number.POSITIVE_INFINITY,
      query: query.query,
      textOf: (hit) => {
        switch (hit.tier) {
          case 'memories':
            return hit.memory.memory.content; // not the display text: no [STALE — …] prefix
          case 'episodes':
            return indexedEpisodeText(hit.episode);
          case 'turns':
            return hit.text;
        }
      },
      confidenceOf: (hit) => (hit.tier === 'memories' ? hit.memory.confidence : null),
    },
    config,
  );
  const folded = foldOutdated(
    groups,
    (group) =>
      group.representative.tier === 'memories' ? group.representative.memory.memory : null,
    query.k,
  );
  return folded.map(({ item, replaces }) => {
    const hit = resultOf(item, config);
    if (hit.tier !== 'memories' || replaces.length === 0) return hit;
    return {
      ...hit,
      replaces: replaces.flatMap(({ item: group, reason }) => {
        const shown = group.representative;
        return shown.tier === 'memories'
          ? [
              {
                memoryId: shown.memory.memory.memoryId,
                content: shown.memory.content,
                confidence: shown.memory.confidence,
                reason,
              },
            ]
          : [];
      }),
    };
  });
}

/** One group as the result shown: its representative, scored and explained for the group. */
function resultOf(group: MergedGroup<RecallHit>, config: RankingConfig): RecallHit {
  const shown = group.representative;
  const others = group.members.filter((m) => m !== shown);
  const explanation =
    (shown === group.best
      ? ''
      : `group final ${group.finalScore.toFixed(4)} from its best, ${group.best.tier} ${group.best.id}; shown: `) +
    explainScore(group.score, config.hybrid, config.priors) +
    `; query-term coverage ${group.coverage.toFixed(4)}` +
    crossTierNote(group.relevance) +
    (others.length > 0
      ? `; one source with ${others.map((m) => `${m.tier} ${m.id}`).join(', ')}`
      : '');
  return {
    ...shown,
    score: { ...group.score, finalScore: group.finalScore },
    provenance: group.provenance,
    explanation,
  };
}

/**
 * Which reading gave the cross-tier relevance (recall-merge.ts crossTierRelevance): said only when
 * the semantic one did, i.e. when the query-term coverage did not count.
 */
function crossTierNote(relevance: CrossTierRelevance): string {
  if (relevance.semantic <= relevance.lexical) return '';
  return (
    `; relevance ${relevance.relevance.toFixed(4)} semantic (cosine rank #${relevance.cosineRank} ` +
    `of all tiers), over lexical ${relevance.lexical.toFixed(4)}`
  );
}
