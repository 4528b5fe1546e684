import type { FrictionScope } from '@engram/core';
import type { FrictionTopics } from './sqlite-friction-source';

/** What the friction source specs share: the unprefixed agent topics and a week's window. */
export const FRICTION_TOPICS: FrictionTopics = {
  prompts: 'agent.prompts.v1',
  toolCalls: 'agent.tool-calls.v1',
  lifecycle: 'agent.lifecycle.v1',
};
export const T0 = Date.UTC(2026, 10, 20, 9);
export const DAY = 86_400_000;
export const WINDOW = { from: T0 - DAY, to: T0 + 6 * DAY };
export const ALL: FrictionScope = { kind: 'all' };
