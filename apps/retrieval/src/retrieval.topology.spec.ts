import type { SinkConsumer, TopicCodec } from '@engram/core';
import { describe, expect, it } from 'vitest';
import type { RetrievalIndexer } from './retrieval-indexer';
import { prefixedRetrievalTopics } from './retrieval-topics';
import { subscribeIndexer } from './retrieval.topology';

type SubscribeOptions = { tombstones?: boolean };

describe('subscribeIndexer', () => {
  it('should take tombstones on the two compacted topics only (a null prompt or tool call stays poison)', () => {
    const subscriptions: [string, unknown, SubscribeOptions | undefined][] = [];
    const consumer = {
      subscribe(codec: TopicCodec<unknown>, handle: unknown, options?: SubscribeOptions) {
        subscriptions.push([codec.topic, handle, options]);
        return this;
      },
    };
    const indexer = {
      handleMemories: () => Promise.resolve(),
      handleEpisodes: () => Promise.resolve(),
      handlePrompts: () => Promise.resolve(),
      handleToolCalls: () => Promise.resolve(),
    };
    const topics = prefixedRetrievalTopics('t.');

    subscribeIndexer(
      consumer as unknown as SinkConsumer,
      topics,
      indexer as unknown as RetrievalIndexer,
    );

    expect(subscriptions).toEqual([
      [topics.memories, indexer.handleMemories, { tombstones: true }],
      [topics.episodes, indexer.handleEpisodes, { tombstones: true }],
      [topics.prompts, indexer.handlePrompts, undefined],
      [topics.toolCalls, indexer.handleToolCalls, undefined],
    ]);
  });
});
