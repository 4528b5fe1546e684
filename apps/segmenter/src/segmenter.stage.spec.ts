import type { Episode, ThreadLinkDecision } from '@engram/contracts';
import { segmenterSettings } from '@engram/core';
import type { AnyStageOutput, Delivered, StageOutput } from '@engram/core';
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
  threadLinks: codec('thread-links'),
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

  it("should link a new thread to the same user's recent thread on the same work and record every decision", async () => {
    const { stage, commit } = harness();
    const base = prompts[0].event;
    const at = base.timestamp;
    const turn = (n: number, minutes: number, text: string, sessionId = 'implicit-a') =>
      delivered(
        {
          ...base,
          eventId: `${sessionId}-${n}`,
          sessionId,
          promptId: n,
          timestamp: at + minutes * 60_000,
          channel: 'slack',
          channelKind: 'implicit' as const,
          explicitThreadId: null,
          userId: 'dev-7',
          source: 'user' as const,
          text,
        },
        n,
      );
    commit(
      await stage.promptStage.transform([
        turn(1, 0, 'fix the token refresh race in src/auth/refresh.ts during logout'),
        turn(2, 5, 'the refresh race in src/auth/refresh.ts still loses the session token'),
      ]),
    );
    // Two hours later (a new thread after 30 min of inactivity): the same work, then other work.
    const later = await stage.promptStage.transform([
      turn(3, 125, 'the token refresh race in src/auth/refresh.ts came back after logout'),
      turn(4, 130, 'add a regression test for the token refresh race in refresh.ts'),
    ]);
    commit(later);
    const unrelated = await stage.promptStage.transform([
      turn(1, 300, 'draft the quarterly hiring plan for the design team budget', 'implicit-b'),
    ]);
    commit(unrelated);

    const decisions = (outputs: AnyStageOutput[]) =>
      (outputs.find((o) => 'codec' in o && o.codec === CODECS.threadLinks) as StageOutput)
        .events as ThreadLinkDecision[];
    const [link, outcome] = decisions(later);
    expect(link).toMatchObject({
      decision: 'LINK',
      decidedBy: 'algorithmic',
      llmStatus: 'not_configured',
    });
    expect(link.score).toBeGreaterThan(0.7);
    expect(link.linkedEpisodeId).not.toBeNull();
    // The follow-up on the same work is the evidence: the decision is republished, CORRECT.
    expect(outcome).toMatchObject({ decisionId: link.decisionId, outcome: 'CORRECT' });
    expect(outcome.eventId).not.toBe(link.eventId);
    const [noLink] = decisions(unrelated);
    expect(noLink).toMatchObject({ decision: 'NO_LINK' });
    expect(noLink.score).toBeLessThanOrEqual(0.7);

    // The linked episode carries the link when it closes.
    const closing = await stage.promptStage.transform([
      turn(5, 200, 'now write the migration guide for the billing export api endpoints'),
    ]);
    const episodes = (
      closing.find((o) => 'codec' in o && o.codec === CODECS.episodes) as StageOutput
    ).events as Episode[];
    expect(episodes.find((e) => e.episodeId === link.newEpisodeId)?.crossThreadEpisodeIds).toEqual([
      link.linkedEpisodeId,
    ]);
  });

  it('should blend prompt embeddings into the similarity in hybrid mode', async () => {
    const base = prompts[0].event;
    const turn = (n: number, text: string) =>
      delivered(
        { ...base, eventId: `h-${n}`, promptId: n, timestamp: base.timestamp + n * 60_000, text },
        n,
      );
    const batch = [
      turn(1, 'fix the token refresh race in src/auth/refresh.ts during logout'),
      turn(2, 'debug the login failure users report after signing out of the dashboard'),
    ];
    const run = async (mode: 'keyword' | 'hybrid') => {
      const embedded: string[][] = [];
      const stage = new SegmenterStage(
        DEFAULT_SEGMENTER_TOPICS,
        CODECS,
        segmenterSettings({ mode }),
        () => Promise.resolve(new Map<string, Buffer>()),
        (text) => text,
        POSITIONS,
        (texts) => {
          embedded.push(texts);
          return Promise.resolve(texts.map(() => [1, 0, 0]));
        },
      );
      const opened = boundaries(await stage.promptStage.transform(batch)).filter(
        (b) => (b as { type: string }).type === 'EpisodeOpened',
      );
      return { opened: opened.length, embedded };
    };
    // No shared keyword: keyword mode splits; the embeddings say "same topic" and hybrid does not.
    expect(await run('keyword')).toEqual({ opened: 2, embedded: [] });
    expect(await run('hybrid')).toEqual({ opened: 1, embedded: [batch.map((b) => b.event.text)] });
  });

  it('should wait for the LLM assessor on a new thread and let a confident answer decide', async () => {
    const asked: string[] = [];
    const stage = new SegmenterStage(
      DEFAULT_SEGMENTER_TOPICS,
      CODECS,
      segmenterSettings(),
      () => Promise.resolve(new Map<string, Buffer>()),
      (text) => text,
      POSITIONS,
      undefined,
      {
        assess: (input) => {
          asked.push(input.currentMessage);
          return Promise.resolve({
            related: true,
            confidence: 0.99,
            reasoning: 'r',
            keySignals: [],
          });
        },
      },
    );
    const base = prompts[0].event;
    const turn = (n: number, minutes: number, text: string) =>
      delivered(
        {
          ...base,
          sessionId: 'llm-session',
          eventId: `llm-${n}`,
          promptId: n,
          timestamp: base.timestamp + minutes * 60_000,
          channelKind: 'implicit' as const,
          explicitThreadId: null,
          userId: 'dev-9',
          source: 'user' as const,
          text,
        },
        n,
      );
    const outputs = await stage.promptStage.transform([
      turn(1, 0, 'fix the token refresh race in src/auth/refresh.ts during logout'),
      turn(2, 90, 'draft the quarterly hiring plan for the design team budget'),
    ]);
    const [decision] = (
      outputs.find((o) => 'codec' in o && o.codec === CODECS.threadLinks) as StageOutput
    ).events as ThreadLinkDecision[];
    expect(asked).toEqual(['draft the quarterly hiring plan for the design team budget']);
    expect(decision).toMatchObject({
      decision: 'LINK',
      decidedBy: 'llm',
      uncertain: true,
      llmStatus: 'ok',
    });
  });

  it('should annotate a closed episode only once the tool calls reported before its close are in', async () => {
    const positions: InputPositions = {
      ...POSITIONS,
      endOffsets: () => Promise.resolve({ prompts: 2, toolCalls: 2 }),
    };
    const stage = new SegmenterStage(
      DEFAULT_SEGMENTER_TOPICS,
      CODECS,
      segmenterSettings(),
      () => Promise.resolve(new Map<string, Buffer>()),
      (text) => text,
      positions,
    );
    const base = prompts[0].event;
    const prompt = (n: number, text: string) =>
      delivered(
        { ...base, eventId: `a-${n}`, promptId: n, timestamp: base.timestamp + n * 60_000, text },
        n,
      );
    const toolCall = (offset: number, path: string) =>
      delivered(
        {
          ...recordedStream(1).toolCalls[0],
          sessionId: base.sessionId,
          eventId: `t-${offset}`,
          promptId: 1,
          stepIndex: offset,
          toolName: 'Edit',
          filePaths: [path],
        },
        offset,
      );
    const episodesOf = (outputs: AnyStageOutput[]) =>
      (outputs.find((o) => 'codec' in o && o.codec === CODECS.episodes) as StageOutput)
        .events as Episode[];

    // Prompt 2 closes episode 1 while its tool calls (offsets 0 and 1) are still on their way.
    const afterPrompts = await stage.promptStage.transform([
      prompt(1, 'fix the token refresh race in src/auth/refresh.ts during logout'),
      prompt(2, 'now upgrade the elasticsearch client and regenerate the index templates'),
    ]);
    expect(boundaries(afterPrompts).length).toBeGreaterThan(0);
    expect(episodesOf(afterPrompts)).toEqual([]);
    expect(
      episodesOf(await stage.toolCallStage.transform([toolCall(0, 'src/auth/refresh.ts')])),
    ).toEqual([]);
    const [episode] = episodesOf(
      await stage.toolCallStage.transform([toolCall(1, 'src/auth/session.ts')]),
    );
    expect(episode.firstPromptId).toBe(1);
    expect(episode.hotFiles.map((f) => f.path).sort()).toEqual([
      'src/auth/refresh.ts',
      'src/auth/session.ts',
    ]);
  });
});
