import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { recallProtoPath } from './avro-schemas';

const RPCS = [
  'Recall',
  'InjectForFile',
  'BuildContext',
  'GetEpisodeSequence',
  'GetEpisodeChain',
  'ReplayTopic',
  'GetWorkflowRecipe',
  'Remember',
  'Feedback',
  'ListForReview',
  'AnalyzeImpact',
  'GetFileNeighbors',
];

interface MessageType {
  type: { field: { name: string }[] };
}

describe('schemas/proto recall.proto', () => {
  const definition = loadSync(recallProtoPath(), { keepCase: true, longs: String, enums: String });

  it('should define the engram.recall.v1.Recall service with the SPEC methods', () => {
    const service = definition['engram.recall.v1.Recall'] as unknown as Record<string, unknown>;
    expect(service).toBeDefined();
    expect(Object.keys(service).sort()).toEqual([...RPCS].sort());
  });

  it('should carry provenance and score components on results', () => {
    const fields = (name: string) =>
      (definition[`engram.recall.v1.${name}`] as unknown as MessageType).type.field.map(
        (f) => f.name,
      );
    expect(fields('RecallResult')).toEqual(expect.arrayContaining(['scores', 'provenance']));
    expect(fields('ScoreComponents')).toEqual(
      expect.arrayContaining(['bm25', 'knn', 'fused', 'phase_weight', 'final_score']),
    );
    expect(fields('Provenance')).toEqual(
      expect.arrayContaining([
        'tenant_id',
        'project_id',
        'session_ids',
        'episode_ids',
        'prompt_ids',
        'event_ids',
      ]),
    );
  });
});
