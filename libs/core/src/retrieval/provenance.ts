import type { Episode, Memory } from '@engram/contracts';

/** Where a result came from, so any answer can be traced to the turns behind it (SPEC §7). */
export interface Provenance {
  tenantId: string;
  projectId: string;
  sessionIds: string[];
  episodeIds: string[];
  promptIds: number[];
  eventIds: string[];
  memoryId: string | null;
  commitSha: string | null;
}

/** The creating session first, then the sessions that reinforced the memory (deduplicated). */
export function memoryProvenance(memory: Memory): Provenance {
  return {
    tenantId: memory.tenantId,
    projectId: memory.projectId,
    sessionIds: unique([memory.sessionId, ...memory.provenanceSessionIds]),
    episodeIds: memory.episodeId ? [memory.episodeId] : [],
    promptIds: [],
    eventIds: [...memory.sourceEventIds],
    memoryId: memory.memoryId,
    commitSha: memory.commitSha,
  };
}

/** An episode's prompts are contiguous in its thread: first..last (bounded by the size limit). */
export function episodeProvenance(episode: Episode): Provenance {
  const promptIds: number[] = [];
  for (
    let id = episode.firstPromptId;
    id <= episode.lastPromptId && promptIds.length < 1000;
    id += 1
  ) {
    promptIds.push(id);
  }
  return {
    tenantId: episode.tenantId,
    projectId: episode.projectId,
    sessionIds: [episode.sessionId],
    episodeIds: [episode.episodeId],
    promptIds,
    eventIds: [...episode.sourceEventIds],
    memoryId: null,
    commitSha: null,
  };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.filter((value) => value !== ''))];
}
