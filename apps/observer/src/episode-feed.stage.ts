import type { Typed } from '@engram/contracts';
import type { ExactlyOnceStage, StageOutput, TopicCodec } from '@engram/core';
import { emptyProjectWork, projectKeyOf, type ProjectWork } from './project-work';

/**
 * memory.episodes.v1 → the project stage: each episode's prompt range, so the memories promoted
 * later name the episode of their newest evidence. Episodes are keyed by episodeId (any
 * partition), so they are repartitioned by project like the session stage's work. Stateless: the
 * project stage keeps the ranges. An episode that arrives after its session's promotion leaves
 * that memory without an episode id; the next promotion from the same evidence carries it.
 */
export function episodeFeedStage(
  projectWork: TopicCodec<ProjectWork>,
): ExactlyOnceStage<Typed<'Episode'>> & { counters: { projectWorks: number } } {
  let staged = 0;
  const counters = { projectWorks: 0 };
  return {
    /** ProjectWork records committed for the project stage (waits compare them). */
    counters,
    onCommitted: () => {
      counters.projectWorks += staged;
      staged = 0;
    },
    onAborted: () => {
      staged = 0;
    },
    transform(items) {
      const byProject = new Map<string, ProjectWork>();
      for (const { event } of items) {
        const key = projectKeyOf(event);
        let work = byProject.get(key);
        if (!work) {
          work = emptyProjectWork(event.tenantId, event.projectId);
          byProject.set(key, work);
        }
        work.episodes!.push({
          sessionId: event.sessionId,
          episodeId: event.episodeId,
          firstPromptId: event.firstPromptId,
          lastPromptId: event.lastPromptId,
        });
      }
      const output: StageOutput<ProjectWork> = {
        codec: projectWork,
        events: [...byProject.values()],
      };
      staged = output.events.length;
      return [output];
    },
  };
}
