import type { TokenRole } from './tenant-access';
import { USER_TAUGHT_AGENT_ID } from './remember';

/**
 * The role a Remember needs: an agent's note (validated later by the observer) is a write; a
 * person teaching a memory (no agent: it is stored `userVerified` at once and injected into
 * every agent's context) needs an admin token — never an agent's write token, or one prompt
 * injection would plant "verified" instructions for every later session.
 */
export function rememberNeeds(input: { agentId?: string | null }): TokenRole {
  const agentId = input.agentId?.trim() ?? '';
  return agentId === '' || agentId === USER_TAUGHT_AGENT_ID ? 'admin' : 'write';
}

/**
 * The role a Feedback needs: flagging, marking outdated, deleting and de-duplicating are writes;
 * confirming or correcting a memory vouches for it (`userVerified`, the corrected text injected
 * as the truth), which needs an admin token.
 */
export function feedbackNeeds(input: {
  action?: string | null;
  reason?: string | null;
}): TokenRole {
  const action = input.action?.trim().toLowerCase() ?? '';
  const reason = input.reason?.trim().toLowerCase() ?? '';
  if (action === 'confirm') return 'admin';
  if (action === 'correct' && reason !== 'outdated' && reason !== 'duplicate') return 'admin';
  return 'write';
}
