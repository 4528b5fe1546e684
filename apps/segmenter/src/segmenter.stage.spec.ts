import { segmenterSettings } from '@engram/core';
import type { AnyStageOutput, Delivered, StageOutput } from '@engram/kafka';
import { describe, expect, it } from 'vitest';
import { recordedStream } from '../../../test/integration/support/recorded-sessions';
import {
  DEFAULT_SEGMENTER_TOPICS,
  SegmenterStage,
  type InputPositions,
  type SegmenterCodecs,
} from './segmenter.stage';

const codec = (topic: string) => ({ topic }) as unknown as SegmenterCodecs['prompts'];
const CODECS = {
  prompts: codec('prompts'),
  toolCalls: codec('tool-calls'),
  lifecycle: codec('lifecycle'),
  boundaries: codec('boundaries'),
  episodes: codec('episodes'),
} as unknown as SegmenterCodecs;
const POSITIONS: InputPositions = {
  endOffsets: () => Promise.resolve({ prompts: 0, toolCalls: 0 }),
  committedOffsets: (partitions) =>
    Promise.resolve(new Map(partitions.map((p) => [p, { prompts: 0, toolCalls: 0 }]))),
};

/** A stage whose "changelog" is a map the test commits to, as Kafka would on commit. */
function harness() {
  const committedLog = new Map<string, Buffer>();
  let restores = 0;
  const stage = new SegmenterStage(
    DEFAULT_SEGMENTER_TOPICS,
    CODECS,
    segmenterSettings(),
    () => {
      restores += 1;
      return Promise.resolve(new Map(committedLog));
    },
    (text) => text,
    POSITIONS,
  );
  const commit = (outputs: AnyStageOutput[]) => {
    for (const output of outputs) {
      if (!('messages' in output)) continue;
      for (const message of output.messages) {
        const key = String(message.key);
        if (message.value === null) committedLog.delete(key);
        else committedLog.set(key, message.value as Buffer);
      }
    }
    stage.committed();
  };
  return { stage, commit, committedLog, restores: () => restores };
}

const delivered = <E>(event: E, offset: number): Delivered<E> => ({
  event,
  topic: 'prompts',
  partition: 0,
  offset: String(offset),
  key: null,
  headers: {},
});

const boundaries = (outputs: AnyStageOutput[]) =>
  (outputs.find((o) => 'codec' in o && o.codec === CODECS.boundaries) as StageOutput).events;

describe('SegmenterStage', () => {
  const prompts = recordedStream(2).prompts.map((p, i) => delivered(p, i));
  const [first, second] = [prompts.slice(0, 6), prompts.slice(6)];

  it('should redo an aborted batch from the committed changelog, giving the same outputs', async () => {
    const reference = harness();
    reference.commit(await reference.stage.promptStage.transform(first));
    const expected = boundaries(await reference.stage.promptStage.transform(second));

    const { stage, commit, restores } = harness();
    commit(await stage.promptStage.transform(first));
    await stage.promptStage.transform(second);
    stage.aborted();
    const redone = await stage.promptStage.transform(second);

    expect(restores()).toBe(2);
    expect(boundaries(redone)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
  });

  it('should tombstone the changelog entry of a session the timer drops for good', async () => {
    const { stage, commit, committedLog } = harness();
    const prompt = prompts[0].event;
    commit(await stage.promptStage.transform([prompts[0]]));
    expect(committedLog.has(prompt.sessionId)).toBe(true);

    // A prompt of another session two days later moves the stream clock past every timeout.
    const later = {
      ...prompts[prompts.length - 1].event,
      sessionId: 'late-session',
      eventId: 'late-event',
      promptId: 1,
      timestamp: prompt.timestamp + 48 * 3_600_000,
    };
    commit(await stage.promptStage.transform([delivered(later, 99)]));
    commit(await stage.sweep());

    expect(committedLog.has(prompt.sessionId)).toBe(false);
    expect(stage.openSessions).toBe(1);
  });
});
