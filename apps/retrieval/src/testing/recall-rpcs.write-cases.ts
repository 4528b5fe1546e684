import { status } from '@grpc/grpc-js';
import type { Typed } from '@engram/contracts';
import { expect, it } from 'vitest';
import { call } from './recall-rpc-client';
import { SCOPE, type RecallRpcsContext, type ScoredMemoryMessage } from './recall-rpcs.context';
import { AUTH_FILE, CURRENT_SESSION, OTHER_TENANT } from './rpc-corpus';
import { expectSessionNotes } from './session-notes-rpc.checks';
import { TENANT } from './records';

// The recall rpcs suite, the rpcs that write: Remember (an agent's note, a person's lesson, a
// session's scratchpad) and Feedback (confirm, flag, correct, delete). Test support only.

/** Remember: published for validation, or a memory at once; recallable in its session. */
export function rememberCases(t: RecallRpcsContext): void {
  it("Remember: an agent's note is published for validation; a person's lesson is a memory at once", async () => {
    const note = await call<{ event_id: string; memory_id: string; accepted: boolean }>(
      t.client,
      'Remember',
      {
        scope: SCOPE,
        session_id: CURRENT_SESSION,
        agent_id: 'claude-code',
        text: 'Never call refresh() outside the mutex',
        type: 'gotcha',
        related_files: [AUTH_FILE],
      },
    );
    expect(note.response).toMatchObject({ accepted: true, memory_id: '' });
    expect(note.response!.event_id).toMatch(/^[0-9a-f-]{36}$/);
    const taught = await call<{ event_id: string; memory_id: string; accepted: boolean }>(
      t.client,
      'Remember',
      { scope: SCOPE, user_id: 'alice', text: 'Deploys to the zanzibar cluster need the VPN' },
    );
    expect(taught.response!.memory_id).toMatch(/^[0-9a-f-]{36}$/);
    const recalled = await call<{
      results: { memory?: { memory_id: string; source: string; user_verified: boolean } }[];
    }>(t.client, 'Recall', { scope: SCOPE, query: 'zanzibar cluster VPN', tier: 'TIER_MEMORIES' });
    expect(recalled.response!.results[0]?.memory).toMatchObject({
      memory_id: taught.response!.memory_id,
      source: 'user_taught',
      user_verified: true,
    });
    const lifecycle = await t.fx.published('agent.lifecycle.v1', 2);
    expect(lifecycle.map((r) => r.eventId)).toEqual(
      expect.arrayContaining([note.response!.event_id, taught.response!.event_id]),
    );
    expect(lifecycle.find((r) => r.eventId === note.response!.event_id)).toMatchObject({
      type: 'RememberRequested',
      tenantId: TENANT,
      agentId: 'claude-code',
      memoryType: 'gotcha',
      relatedFiles: [AUTH_FILE],
    });
    const memories = await t.fx.published('memory.memories.v1', 1);
    expect(memories.map((r) => (r as Typed<'Memory'>).memoryId)).toContain(
      taught.response!.memory_id,
    );
    const again = await call<{ event_id: string }>(t.client, 'Remember', {
      scope: SCOPE,
      user_id: 'alice',
      text: 'Deploys to the zanzibar cluster need the VPN',
    });
    expect(again.response!.event_id).toBe(taught.response!.event_id); // deterministic ids
    const refused: [object, string][] = [
      [{ scope: SCOPE, agent_id: 'a' }, 'text'],
      [{ scope: SCOPE, agent_id: 'a', text: 'x', type: 'nonsense' }, 'type'],
      [{ scope: SCOPE, text: 'x' }, 'agent_id'],
    ];
    for (const [request, field] of refused) {
      const { error } = await call(t.client, 'Remember', request);
      expect(error?.code, field).toBe(status.INVALID_ARGUMENT);
      expect(error?.details).toMatch(new RegExp(`^${field}: `));
    }
    const denied = await call(t.client, 'Remember', {
      scope: { ...SCOPE, tenant_id: OTHER_TENANT },
      agent_id: 'a',
      text: 'x',
    });
    expect(denied.error?.code).toBe(status.PERMISSION_DENIED);
  });

  it('Remember in a session: the note is recalled there at once, nowhere else, and once validated it is the memory', () =>
    expectSessionNotes(
      (rpc, request, token) => call(t.client, rpc, request, token),
      (memory) => t.fx.indexMemory(memory),
    ));
}

/** Feedback: each action updates or deletes the memory at once. */
export function feedbackCases(t: RecallRpcsContext): void {
  it('Feedback: confirm, flag wrong and outdated update the memory at once', async () => {
    type Answer = { memory_id: string; applied: boolean; confidence: number; deleted: boolean };
    const feedback = (request: object, token?: string) =>
      call<Answer>(t.client, 'Feedback', { scope: SCOPE, ...request }, token);
    const injected = async () => {
      const { response } = await call<{ memories: ScoredMemoryMessage[] }>(
        t.client,
        'InjectForFile',
        { scope: SCOPE, file_path: AUTH_FILE },
      );
      return response!.memories.map((m) => m.memory.memory_id).sort();
    };
    expect(await injected()).toEqual(['inj-error', 'inj-gotcha']);
    const confirmed = await feedback({
      memory_id: 'inj-unproven',
      action: 'FEEDBACK_ACTION_CONFIRM',
      user_id: 'alice',
    });
    expect(confirmed.response).toEqual({
      memory_id: 'inj-unproven',
      applied: true,
      confidence: 0.9,
      deleted: false,
    });
    const flagged = await feedback({
      memory_id: 'inj-gotcha',
      action: 'FEEDBACK_ACTION_FLAG_WRONG',
    });
    expect(flagged.response!.confidence).toBeCloseTo(0.45, 9);
    await feedback({
      memory_id: 'inj-error',
      action: 'FEEDBACK_ACTION_CORRECT',
      reason: 'CORRECTION_REASON_OUTDATED',
    });
    // Proven by a person now; wrong; no longer applies.
    expect(await injected()).toEqual(['inj-unproven']);
    const memories = (await t.fx.published('memory.memories.v1', 4)) as Typed<'Memory'>[];
    expect(memories.find((m) => m.memoryId === 'inj-gotcha')).toMatchObject({
      needsReview: true,
      userVerified: false,
    });
    const refused: [object, number, string][] = [
      [{ memory_id: 'inj-low' }, status.INVALID_ARGUMENT, 'action: '],
      [
        {
          memory_id: 'inj-low',
          action: 'FEEDBACK_ACTION_CORRECT',
          reason: 'CORRECTION_REASON_INACCURATE',
        },
        status.INVALID_ARGUMENT,
        'corrected_content: ',
      ],
      [
        { memory_id: 'nope', action: 'FEEDBACK_ACTION_CONFIRM' },
        status.INVALID_ARGUMENT,
        'memory_id: ',
      ],
    ];
    for (const [request, code, field] of refused) {
      const { error } = await feedback(request);
      expect(error?.code, JSON.stringify(request)).toBe(code);
      expect(error?.details).toMatch(new RegExp(`^${field}`));
    }
    const foreign = await feedback(
      { memory_id: 'inj-decision', action: 'FEEDBACK_ACTION_CONFIRM' },
      'token-globex',
    );
    expect(foreign.error?.details).toMatch(/^memory_id: no memory/);
  });

  it('Feedback: delete and correct-as-duplicate delete the memory: a tombstone, gone from recall', async () => {
    type Answer = { memory_id: string; applied: boolean; confidence: number; deleted: boolean };
    const feedback = (request: object, token?: string) =>
      call<Answer>(t.client, 'Feedback', { scope: SCOPE, ...request }, token);
    const recalled = async (query: string) => {
      const { response } = await call<{ results: { memory?: { memory_id: string } }[] }>(
        t.client,
        'Recall',
        { scope: SCOPE, query, tier: 'TIER_MEMORIES' },
      );
      return response!.results.map((r) => r.memory?.memory_id);
    };
    const DELETE = 'FEEDBACK_ACTION_DELETE';
    expect(await recalled('Polling the token')).toContain('inj-low');
    // Another tenant's caller does not find it, and deletes nothing.
    const foreign = await feedback({ memory_id: 'inj-low', action: DELETE }, 'token-globex');
    expect(foreign.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(foreign.error?.details).toMatch(/^memory_id: no memory inj-low/);
    expect(await recalled('Polling the token')).toContain('inj-low');

    const deleted = await feedback({ memory_id: 'inj-low', action: DELETE, user_id: 'alice' });
    expect(deleted.response).toEqual({
      memory_id: 'inj-low',
      applied: true,
      confidence: 0,
      deleted: true,
    });
    expect(await recalled('Polling the token')).not.toContain('inj-low');
    const again = await feedback({ memory_id: 'inj-low', action: DELETE });
    expect(again.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(again.error?.details).toMatch(/^memory_id: no memory inj-low in this project/);

    const duplicate = (duplicateOf: string) =>
      feedback({
        memory_id: 'inj-stale',
        action: 'FEEDBACK_ACTION_CORRECT',
        reason: 'CORRECTION_REASON_DUPLICATE',
        duplicate_of_memory_id: duplicateOf,
      });
    const query = 'old refresh helper must be imported first';
    expect(await recalled(query)).toContain('inj-stale');
    // A duplicate of a memory the project does not have (another tenant's) deletes nothing.
    const ofForeign = await duplicate('globex-gotcha');
    expect(ofForeign.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(ofForeign.error?.details).toMatch(/^duplicate_of_memory_id: no memory globex-gotcha/);
    expect(await recalled(query)).toContain('inj-stale');
    expect((await duplicate('inj-gotcha')).response).toMatchObject({
      memory_id: 'inj-stale',
      deleted: true,
    });
    expect(await recalled(query)).not.toContain('inj-stale');
    expect((await t.fx.tombstones('memory.memories.v1')).sort()).toEqual(['inj-low', 'inj-stale']);
  });
}
