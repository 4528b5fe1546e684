import { describe, expect, it } from 'vitest';
import { distillationToMemories } from '../memories';
import { SessionBuilder } from '../testing/session-builder';
import { distillationWindow, type DistillationTrigger, type SessionEvents } from '../triggers';
import { actionOf, pastTense, requestAsAction } from './actions';
import { distillExtractively } from './extractive-distiller';

describe('pastTense', () => {
  it.each([
    ['add', 'added'],
    ['update', 'updated'],
    ['apply', 'applied'],
    ['deploy', 'deployed'],
    ['drop', 'dropped'],
    ['edit', 'edited'],
    ['write', 'wrote'],
    ['set', 'set'],
  ])('%s → %s', (verb, past) => expect(pastTense(verb)).toBe(past));
});

describe('requestAsAction', () => {
  it('should report an imperative request, fillers and polite lead-ins gone, context kept', () => {
    expect(requestAsAction('ok now please add a retry to the client, 3 attempts at most')).toBe(
      'Added a retry to the client (3 attempts at most)',
    );
    expect(requestAsAction('Can you update the README to reflect the current state?')).toBe(
      'Updated the README to reflect the current state',
    );
    expect(requestAsAction("Let's rename `/data-capture` to `/src`. Move the db to `/data`")).toBe(
      'Renamed `/data-capture` to `/src`; moved the db to `/data`',
    );
  });

  it('should not take a noun followed by its verb, a lone verb or a question for an action', () => {
    expect(actionOf('test fails since the upgrade')).toBeNull();
    expect(actionOf('cache is stale again')).toBeNull();
    expect(actionOf('fix it')).toBeNull();
    expect(requestAsAction('what does parseConfig do?')).toBeNull();
    expect(requestAsAction('thanks, looks good')).toBeNull();
  });
});

describe('memory ids of the new facts', () => {
  function distill(trigger: DistillationTrigger, events: SessionEvents) {
    const decision = distillationWindow(trigger, events);
    if (decision.kind !== 'distill') throw new Error(decision.reason);
    return distillationToMemories(distillExtractively(decision.window));
  }

  it('should give a fact the same id from its episode close and from the session end', () => {
    const s = new SessionBuilder('sess-ids', Date.UTC(2026, 2, 3, 9, 0));
    s.user('add rate limiting to the search endpoint in src/api/search.ts, 20 requests per minute');
    s.tool('Edit', { files: ['src/api/search.ts'] });
    s.user("no, don't count health checks against the limit, exempt /healthz instead");
    s.tool('Edit', { files: ['src/api/search.ts'] });
    for (const text of ['ok', 'thanks', 'push it']) s.user(text);
    const episode = distill(s.episodeClosed(1, 2), s.events());
    const session = distill(s.sessionEnded(), s.events());
    const ids = (memories: typeof episode) =>
      memories
        .filter((m) => m.memoryType !== 'work_state')
        .map((m) => m.memoryId)
        .sort();
    expect(ids(episode)).toHaveLength(2);
    expect(ids(session)).toEqual(ids(episode));
  });
});
