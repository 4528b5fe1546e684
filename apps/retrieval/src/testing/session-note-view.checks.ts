import { SCHEMA_VERSION, type Typed } from '@engram/contracts';
import { isSessionNote, memoryIdOf, type RecallScope } from '@engram/core';
import type { RecallStack } from '../recall-stack';

// The session notes as a view of agent.lifecycle.v1 (issue #20), as a client sees them: a
// Remember in a session, the notes a recall in a session is shown, and the SessionEnded that ends
// them. The embedded restart spec and the Kafka + Elasticsearch integration test use them. Test
// support only.

/** Words nothing else in a test store has: only the note can match them. */
export const VIEW_NOTE = 'The okapi importer must drain its pangolin queue before a deploy';
export const VIEW_QUERY = 'okapi importer pangolin queue';

/** The note's memory id (the validated memory's, memoryIdOf of its type and text). */
export function viewNoteId(scope: RecallScope): string {
  return memoryIdOf(scope.tenantId, scope.projectId, 'gotcha', VIEW_NOTE);
}

/** An agent's Remember of VIEW_NOTE in `sessionId`, through the stack's Remember service. */
export async function rememberViewNote(
  stack: Pick<RecallStack, 'remember'>,
  scope: RecallScope,
  sessionId: string,
): Promise<void> {
  const answer = await stack.remember.remember({
    ...scope,
    sessionId,
    agentId: 'claude-code',
    text: VIEW_NOTE,
    type: 'gotcha',
  });
  if (!answer.accepted) throw new Error('Remember refused the note');
}

/** The ids of the session notes a recall of VIEW_QUERY in `sessionId` is shown. */
export async function sessionNoteIdsIn(
  stack: Pick<RecallStack, 'service'>,
  scope: RecallScope,
  sessionId: string,
): Promise<string[]> {
  const { results } = await stack.service.recall({
    ...scope,
    sessionId,
    query: VIEW_QUERY,
    tier: 'memories',
    track: false,
  });
  return results.flatMap((hit) =>
    hit.tier === 'memories' && isSessionNote(hit.memory.memory) ? [hit.memory.memory.memoryId] : [],
  );
}

/** The SessionEnded an agent's hook publishes when the session ends. */
export function sessionEndedEvent(scope: RecallScope, sessionId: string): Typed<'SessionEnded'> {
  return {
    type: 'SessionEnded',
    eventId: `${sessionId}:ended`,
    ...scope,
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: Date.now(),
    schemaVersion: SCHEMA_VERSION,
    userMessageCount: 1,
    durationS: 30,
    reason: 'exit',
  };
}
