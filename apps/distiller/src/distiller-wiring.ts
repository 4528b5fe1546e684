import type { ExactlyOnceStage, TopicCodec } from '@engram/core';
import type { DistillerCodecs, DistillerStage, DistillerTopics } from './distiller.stage';
import type { EpisodeSummaryStage } from './episode-summary.stage';
import type { MemoryMergeStage } from './memory-merge.stage';
import type { ReflectorStage } from './reflector/reflector.stage';

/** The distiller's four exactly-once stages, whichever log they run on. */
export interface DistillerStages {
  stage: DistillerStage;
  summaries: EpisodeSummaryStage;
  reflector: ReflectorStage;
  merge: MemoryMergeStage;
}

/** What both processors (Kafka and the embedded SQLite log) offer to subscribe a stage. */
interface StageSubscriber {
  subscribe<E>(codec: TopicCodec<E>, stage: ExactlyOnceStage<E>): this;
}

/** After a (re)assignment, each stage keeps the partitions of the topic that keys it. */
export function distillerAssignment(
  topics: DistillerTopics,
  { stage, summaries, reflector, merge }: DistillerStages,
): (assignment: Record<string, number[]>) => void {
  return (assignment) => {
    stage.onAssignment(assignment[topics.prompts] ?? []);
    summaries.onAssignment(assignment[topics.episodes] ?? []);
    reflector.onAssignment(assignment[topics.reflector] ?? []);
    merge.onAssignment(assignment[topics.memoryCandidates] ?? []);
  };
}

/** Every input topic of the distiller to the stage that consumes it. */
export function subscribeDistillerStages<P extends StageSubscriber>(
  processor: P,
  codecs: DistillerCodecs,
  { stage, summaries, reflector, merge }: DistillerStages,
): P {
  return processor
    .subscribe(codecs.prompts, stage.promptStage)
    .subscribe(codecs.toolCalls, stage.toolCallStage)
    .subscribe(codecs.lifecycle, stage.lifecycleStage)
    .subscribe(codecs.boundaries, stage.boundaryStage)
    .subscribe(codecs.episodes, summaries.episodeStage)
    .subscribe(codecs.narratives, summaries.narrativeStage)
    .subscribe(codecs.reflector, reflector.workStage)
    .subscribe(codecs.memoryCandidates, merge.candidateStage);
}
