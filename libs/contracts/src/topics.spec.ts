import { InvalidEventError } from '@engram/errors';
import { describe, expect, it } from 'vitest';
import { avroTypeOfTopic, recordSchema } from './avro-schemas';
import { fromAvroValue, toAvroValue } from './avro-values';
import type { AvroComplexJson } from './schema-index';
import { EVENT_FIXTURES } from './testing/event-fixtures';
import {
  eventKey,
  isRecordName,
  RECORD_NAMES,
  TOPIC_LIST,
  TOPICS,
  topicOfRecord,
  topicSpec,
  type LifecycleEvent,
} from './topics';

describe('TOPICS', () => {
  it('should name each dead-letter topic <topic>.dlq', () => {
    for (const spec of TOPIC_LIST) expect(spec.dlq).toBe(`${spec.topic}.dlq`);
  });

  it('should key the agent and boundary topics by sessionId and the compacted ones by their id', () => {
    const keys = Object.fromEntries(TOPIC_LIST.map((spec) => [spec.topic, spec.keyField]));
    expect(keys).toEqual({
      'agent.prompts.v1': 'sessionId',
      'agent.tool-calls.v1': 'sessionId',
      'agent.lifecycle.v1': 'sessionId',
      'memory.episode-boundaries.v1': 'sessionId',
      'memory.episodes.v1': 'episodeId',
      'memory.memories.v1': 'memoryId',
      'memory.proposals.v1': 'proposalId',
      'memory.thread-links.v1': 'decisionId',
    });
    expect(TOPIC_LIST.filter((spec) => spec.compacted).map((spec) => spec.keyField)).toEqual([
      'episodeId',
      'memoryId',
      'proposalId',
      'decisionId',
    ]);
  });

  it('should name a key field that every record of the topic has as a string', () => {
    for (const spec of TOPIC_LIST) {
      for (const name of spec.records) {
        const field = (recordSchema(name) as AvroComplexJson).fields!.find(
          (f) => f.name === spec.keyField,
        );
        expect(field?.type, `${name}.${spec.keyField}`).toBe('string');
      }
    }
  });

  it('should map every record to exactly one topic', () => {
    expect(new Set(RECORD_NAMES).size).toBe(RECORD_NAMES.length);
    expect(topicOfRecord('CommitMade').topic).toBe('agent.lifecycle.v1');
    expect(topicSpec('memory.episodes.v1')).toBe(TOPICS.episodes);
    expect(isRecordName('WorkUnitRef')).toBe(false);
  });

  it('should take the key from the topic key field', () => {
    expect(eventKey({ type: 'Memory', ...EVENT_FIXTURES.Memory })).toBe(
      EVENT_FIXTURES.Memory.memoryId,
    );
    expect(eventKey({ type: 'SessionEnded', ...EVENT_FIXTURES.SessionEnded })).toBe('session-1');
  });
});

describe('toAvroValue', () => {
  it('should wrap union branches in their full record name', () => {
    const event: LifecycleEvent = { type: 'SessionEnded', ...EVENT_FIXTURES.SessionEnded };
    const value = toAvroValue(event);
    expect(Object.keys(value)).toEqual(['engram.v1.SessionEnded']);
    expect(avroTypeOfTopic('agent.lifecycle.v1').isValid(value)).toBe(true);
  });

  it('should leave single-record topics unwrapped and drop the type tag', () => {
    const value = toAvroValue({ type: 'PromptSubmitted', ...EVENT_FIXTURES.PromptSubmitted });
    expect(value).toEqual(EVENT_FIXTURES.PromptSubmitted);
    expect(avroTypeOfTopic('agent.prompts.v1').isValid(value)).toBe(true);
  });
});

describe('fromAvroValue', () => {
  it('should refuse a union value of a record that the topic does not carry', () => {
    const value = { 'engram.v1.PromptSubmitted': EVENT_FIXTURES.PromptSubmitted };
    expect(() => fromAvroValue('agent.lifecycle.v1', value)).toThrow(InvalidEventError);
  });

  it('should refuse a value that is not a record', () => {
    expect(() => fromAvroValue('agent.prompts.v1', 'text')).toThrow(InvalidEventError);
  });
});
