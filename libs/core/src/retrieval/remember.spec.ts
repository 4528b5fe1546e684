import { describe, expect, it } from 'vitest';
import { memoryIdOf } from '../distillation/memories';
import {
  isUserTaught,
  parseRememberRequest,
  rememberRequestedEvent,
  USER_TAUGHT_AGENT_ID,
  userTaughtMemory,
} from './remember';
import { InvalidRecallRequestError } from './retrieval-errors';
import { NOW, SCOPE } from './testing/fixtures';

describe('remember', () => {
  const note = {
    ...SCOPE,
    sessionId: 's-1',
    agentId: 'claude-code',
    text: '  Never skip the mutex ',
  };

  it("should publish an agent's note as it was asked, with a deterministic event id", () => {
    const request = parseRememberRequest({ ...note, type: 'gotcha', relatedFiles: ['src/a.ts'] });
    expect(isUserTaught(request)).toBe(false);
    const event = rememberRequestedEvent(request, NOW);
    expect(event).toMatchObject({
      type: 'RememberRequested',
      ...SCOPE,
      sessionId: 's-1',
      agentId: 'claude-code',
      userId: null,
      timestamp: NOW,
      text: 'Never skip the mutex',
      memoryType: 'gotcha',
      relatedFiles: ['src/a.ts'],
    });
    expect(rememberRequestedEvent(request, NOW + 1).eventId).toBe(event.eventId);
    const other = parseRememberRequest({ ...note, text: 'Another note' });
    expect(rememberRequestedEvent(other, NOW).eventId).not.toBe(event.eventId);
  });

  it("should make a person's lesson a verified user_taught memory, typed from its words", () => {
    const request = parseRememberRequest({
      ...SCOPE,
      userId: 'alice',
      text: 'Never deploy on Fridays',
    });
    expect(isUserTaught(request)).toBe(true);
    expect(request).toMatchObject({ agentId: USER_TAUGHT_AGENT_ID, sessionId: 'user:alice' });
    const event = rememberRequestedEvent(request, NOW);
    const memory = userTaughtMemory(request, event);
    expect(memory).toMatchObject({
      memoryType: 'gotcha',
      source: 'user_taught',
      userVerified: true,
      scope: 'global',
      sourceEventIds: [event.eventId],
      memoryId: memoryIdOf(SCOPE.tenantId, SCOPE.projectId, 'gotcha', 'Never deploy on Fridays'),
    });
  });

  it('should refuse what cannot be remembered, naming the field', () => {
    const field = (input: object) => {
      try {
        parseRememberRequest({ ...note, ...input });
      } catch (error) {
        return error instanceof InvalidRecallRequestError ? error.field : 'other';
      }
      return null;
    };
    expect(field({ text: ' ' })).toBe('text');
    expect(field({ text: 'x'.repeat(4_001) })).toBe('text');
    expect(field({ type: 'gossip' })).toBe('type');
    expect(field({ agentId: '', userId: '' })).toBe('agentId');
    expect(field({ relatedFiles: [''] })).toBe('relatedFiles');
    expect(field({ projectId: '' })).toBe('projectId');
  });
});
