// The project stage's changelog record (one per project) and the helpers that keep its parts bounded.
import {
  emptyProjectStats,
  foldRecentUpTo,
  mayPropagate,
  type EpisodeRange,
  type ExistingMemoryVector,
  type ProjectObservationStats,
  type RecentEvidence,
} from '@engram/core';
import type { Memory } from '@engram/contracts';
import type { Delivered } from '@engram/core';
import type { ProjectWork, PromotionRequest } from './project-work';

/** A promoted memory's vector, kept for the novelty check of later promotions. */
interface StoredVector {
  memoryId: string;
  model: string;
  /** Float32 little-endian, base64: a quarter of the size of a JSON number list. */
  vector: string;
}

/** The changelog record of one project. */
export interface ProjectRecord {
  v: 1;
  partition: number;
  tenantId: string;
  projectId: string;
  /** Every signal and summary up to `horizon` (and any that came later than that). */
  stats: ProjectObservationStats;
  /**
   * The event time of the newest frozen request (absent: none yet). Evidence newer than it is
   * kept raw in `recent`, so each retained request reads the statistics as of its own time.
   */
  horizon?: number;
  /** Signals and summaries newer than `horizon` (absent in old records: all in `stats`). */
  recent?: RecentEvidence;
  /**
   * Memories promoted per scratchpad by requests no longer retained (its incremental passes
   * share one cap; the retained requests' shares are recounted at each evaluation).
   */
  promotedByScratchpad: Record<string, number>;
  /** Vectors of memories of requests no longer retained, at most MAX_NOVELTY_VECTORS. */
  vectors: StoredVector[];
  /** The project's latest episodes (prompt ranges), at most MAX_EPISODES; absent in old records. */
  episodes?: EpisodeRange[];
  /**
   * The project's latest promotion requests, in canonical order (event time, then ids), at most
   * MAX_RETAINED_REQUESTS: evaluated again whenever the statistics change (issue #19). Absent in
   * old records.
   */
  requests?: PromotionRequest[];
  /** The version last written of each memory of the retained requests: memoryId → digest. */
  emitted?: Record<string, string>;
  /**
   * The confidence of that version (same keys as `emitted`): a re-promotion whose confidence
   * barely moved cannot propagate, and then the memory topic is not read. Absent in old records.
   */
  emittedConfidence?: Record<string, number>;
  /** Memories of requests no longer retained: never withdrawn. */
  frozen?: string[];
}

/** Enough for the sessions whose promotions are still to come. */
const MAX_EPISODES = 500;
/**
 * Raw signals newer than the horizon kept at most (see `boundRecent`): about 40 bytes each once
 * the record is gzipped, so they stay well inside the broker's 1 MB record limit.
 */
export const MAX_RECENT_SIGNALS = 10_000;

/**
 * A project whose sessions give few promotions keeps its recent evidence raw for long: beyond
 * MAX_RECENT_SIGNALS the oldest joins the base (the horizon moves on without a frozen request).
 */
export function boundRecent(record: ProjectRecord, maxSessions: number): void {
  const signals = record.recent?.signals ?? [];
  if (signals.length <= MAX_RECENT_SIGNALS) return;
  const times = signals.map((s) => s.at).sort((a, b) => a - b);
  record.horizon = Math.max(
    record.horizon ?? -Infinity,
    times[times.length - MAX_RECENT_SIGNALS - 1],
  );
  foldRecentUpTo(record.stats, record.recent!, record.horizon, maxSessions);
}

export function newRecord(item: Delivered<ProjectWork>): ProjectRecord {
  return {
    v: 1,
    partition: item.partition,
    tenantId: item.event.tenantId,
    projectId: item.event.projectId,
    stats: emptyProjectStats(),
    promotedByScratchpad: {},
    vectors: [],
  };
}

/** Episodes by id, the latest version of each, the newest MAX_EPISODES kept. */
export function mergeEpisodes(known: EpisodeRange[], incoming: EpisodeRange[]): EpisodeRange[] {
  const byId = new Map(known.map((episode) => [episode.episodeId, episode]));
  for (const episode of incoming) {
    byId.delete(episode.episodeId);
    byId.set(episode.episodeId, episode);
  }
  return [...byId.values()].slice(-MAX_EPISODES);
}

export function existingVectors(record: ProjectRecord): ExistingMemoryVector[] {
  return record.vectors.map((v) => ({
    memoryId: v.memoryId,
    embeddingModel: v.model,
    embedding: fromBase64(v.vector),
  }));
}

export function toBase64(vector: ArrayLike<number>): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}

function fromBase64(text: string): Float32Array {
  // A copy: a decoded Buffer may sit at an offset of a shared pool that is not 4-byte aligned.
  return new Float32Array(Uint8Array.from(Buffer.from(text, 'base64')).buffer);
}

/**
 * Notes the version of a memory about to be written (its digest and confidence): `emit` false when
 * that version was written already; `propagates` when it re-promotes the memory with a confidence
 * that moved enough to move related memories (only then is the memory topic read: on Kafka a read
 * joins a consumer group).
 */
export function noteEmitted(
  record: ProjectRecord,
  memory: Memory,
  digest: string,
): { emit: boolean; propagates: boolean } {
  const emitted = (record.emitted ??= {});
  if (emitted[memory.memoryId] === digest) return { emit: false, propagates: false };
  const confidences = (record.emittedConfidence ??= {});
  const propagates =
    emitted[memory.memoryId] !== undefined &&
    mayPropagate(confidences[memory.memoryId], memory.confidence);
  emitted[memory.memoryId] = digest;
  confidences[memory.memoryId] = memory.confidence;
  return { emit: true, propagates };
}

/** Confidences of memories no longer in `emitted` (withdrawn, frozen) go with them. */
export function forgetUnemittedConfidences(record: ProjectRecord): void {
  const confidences = record.emittedConfidence ?? {};
  for (const memoryId of Object.keys(confidences)) {
    if (record.emitted?.[memoryId] === undefined) delete confidences[memoryId];
  }
}
