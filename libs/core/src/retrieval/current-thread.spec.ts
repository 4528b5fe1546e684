import type { PromptSubmitted } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { resolveCurrentThread } from './current-thread';
import { DAY, episode, NOW, SCOPE } from './testing/fixtures';

function prompt(overrides: Partial<PromptSubmitted> & { eventId: string }): PromptSubmitted {
  return {
    ...SCOPE,
    sessionId: 'session-1',
    agentId: 'claude-code',
    userId: 'user-1',
    timestamp: NOW,
    schemaVersion: 1,
    promptId: 1,
    source: 'user',
    channel: 'chat',
    channelKind: 'implicit',
    explicitThreadId: null,
    text: overrides.eventId,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
    ...overrides,
  };
}

describe('resolveCurrentThread', () => {
  const weather = episode({
    episodeId: 'e-weather',
    threadId: 'thread-weather',
    startedAt: NOW - DAY,
    sourceEventIds: ['p-1', 'p-2'],
  });
  const thursday = episode({
    episodeId: 'e-thursday',
    threadId: 'thread-thursday',
    startedAt: NOW - 60_000,
    sourceEventIds: ['p-3'],
    crossThreadEpisodeIds: ['e-weather', 'e-other-session'],
  });

  it('should take the thread of the newest turn, from the episode that lists it', () => {
    const current = resolveCurrentThread(
      'session-1',
      [
        prompt({ eventId: 'p-1', promptId: 1, timestamp: NOW - DAY }),
        prompt({ eventId: 'p-3', promptId: 3, timestamp: NOW - 60_000 }),
        prompt({ eventId: 'p-2', promptId: 2, timestamp: NOW - DAY + 1 }),
      ],
      [weather, thursday],
    );
    expect(current.threadId).toBe('thread-thursday');
    expect(current.channel).toBe('implicit');
    expect(current.turns.map((t) => [t.eventId, t.threadId])).toEqual([
      ['p-3', 'thread-thursday'],
      ['p-2', 'thread-weather'],
      ['p-1', 'thread-weather'],
    ]);
    expect(current.linkedEpisodeIds).toEqual(['e-other-session', 'e-weather']);
  });

  it('should put a turn no episode lists yet in the newest thread, and honour an explicit thread', () => {
    const ongoing = resolveCurrentThread(
      'session-1',
      [prompt({ eventId: 'p-4', promptId: 4 })],
      [weather, thursday],
    );
    expect(ongoing.threadId).toBe('thread-thursday');
    const explicit = resolveCurrentThread(
      'session-1',
      [prompt({ eventId: 'p-5', channelKind: 'explicit', explicitThreadId: 'picked' })],
      [weather],
    );
    expect(explicit).toMatchObject({
      threadId: 'picked',
      channel: 'explicit',
      linkedEpisodeIds: [],
    });
  });

  it('should fall back to the session itself, implicit, when nothing is known', () => {
    expect(resolveCurrentThread('session-9', [prompt({ eventId: 'p-1' })], [weather])).toEqual({
      threadId: 'session-9',
      channel: 'implicit',
      turns: [],
      linkedEpisodeIds: [],
    });
  });
});
