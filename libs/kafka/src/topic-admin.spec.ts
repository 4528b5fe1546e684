import { KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { waitForLeaders } from './topic-admin';

type Metadata = Awaited<ReturnType<Parameters<typeof waitForLeaders>[0]['fetchTopicMetadata']>>;

function partition(partitionId: number, leader: number) {
  return { partitionId, leader, partitionErrorCode: 0, replicas: [1], isr: [1] };
}

/** Answers each fetch with the next reply: an error to throw or metadata to return. */
function adminAnswering(...replies: (Error | Metadata)[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    fetchTopicMetadata: (): Promise<Metadata> => {
      const reply = replies[Math.min(calls, replies.length - 1)];
      calls += 1;
      return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
    },
  };
}

const unknownTopic = () =>
  // kafkajs builds its protocol errors from the error-code table's entry, as here.
  new KafkaJSProtocolError(
    Object.assign(new Error('This server does not host this topic-partition'), {
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      code: 3,
    }),
  );

describe('waitForLeaders', () => {
  it('should wait through a new topic being unknown, then leaderless, until it has leaders', async () => {
    const admin = adminAnswering(
      unknownTopic(),
      { topics: [{ name: 't', partitions: [partition(0, 1), partition(1, -1)] }] },
      { topics: [{ name: 't', partitions: [partition(0, 1), partition(1, 1)] }] },
    );
    await waitForLeaders(admin, ['t'], { pollMs: 1 });
    expect(admin.calls).toBe(3);
  });

  it('should name the topics still without leaders when it gives up', async () => {
    const admin = adminAnswering({
      topics: [
        { name: 'ready', partitions: [partition(0, 1)] },
        { name: 'stuck', partitions: [partition(0, -1)] },
      ],
    });
    await expect(
      waitForLeaders(admin, ['ready', 'stuck'], { timeoutMs: 5, pollMs: 1 }),
    ).rejects.toThrow(/without partition leaders after 5 ms: stuck$/);
  });

  it('should not retry an error that is not about a topic settling', async () => {
    const admin = adminAnswering(new Error('connection refused'));
    await expect(waitForLeaders(admin, ['t'], { pollMs: 1 })).rejects.toThrow('connection refused');
    expect(admin.calls).toBe(1);
  });
});
