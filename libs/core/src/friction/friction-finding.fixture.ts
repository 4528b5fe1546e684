import type { FrictionFinding } from './friction-types';

/** A recurring failure of acme/api in three sessions (specs override what they test). */
export function frictionFinding(overrides: Partial<FrictionFinding>): FrictionFinding {
  const T0 = Date.UTC(2026, 10, 20, 9);
  return {
    kind: 'recurring-failure',
    key: 'k-1',
    subject: null,
    alsoSeenAs: [],
    tenantId: 'acme',
    projectIds: ['acme/api'],
    title: 'npm test keeps failing',
    summary: 'It failed.',
    sessions: 3,
    firstAt: T0,
    lastAt: T0 + 86_400_000,
    cost: { occurrences: 3, measuredMinutes: 0, tokens: 0, estimatedMinutes: 6 },
    evidence: { sessionIds: ['s-1'], eventIds: ['e-1'], memoryIds: [] },
    agentIds: ['codex'],
    proposedLines: ['- a line'],
    memoryId: null,
    confidence: 0.6,
    ...overrides,
  };
}
