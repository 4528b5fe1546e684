import { describe, expect, it } from 'vitest';
import { codecOnTopic, contractCodec, prefixedTopicNames, valueSubject } from './contract-codecs';

describe('contract codecs and topic names', () => {
  it('should prefix every topic name of a service and keep the keys, leaving the defaults alone', () => {
    const defaults = { prompts: 'agent.prompts.v1', changelog: 'segmenter.state.v1' };
    expect(prefixedTopicNames(defaults, 'it-1.')).toEqual({
      prompts: 'it-1.agent.prompts.v1',
      changelog: 'it-1.segmenter.state.v1',
    });
    expect(defaults.prompts).toBe('agent.prompts.v1');
    expect(prefixedTopicNames(defaults, '')).toEqual(defaults);
  });

  it('should move a contract codec onto another topic with its subject', () => {
    const moved = codecOnTopic(contractCodec('agent.prompts.v1'), 'it-1.agent.prompts.v1');
    expect(moved.topic).toBe('it-1.agent.prompts.v1');
    expect(moved.subject).toBe(valueSubject('it-1.agent.prompts.v1'));
    expect(moved.subject).toBe('it-1.agent.prompts.v1-value');
  });
});
