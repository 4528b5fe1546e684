import type { FailurePatternRow, FrictionSettings } from '@engram/core';
import type { CompositeBucket } from './friction-composite';
import { byCode, fold, measuredOf, smallest, type Measured } from './friction-tool-call-rows';

// The recurring failures of the tool calls (distributed mode), folded from composite buckets —
// one per error pattern of a session — as the embedded failurePatterns query groups the failed
// calls (libs/embedded sqlite-friction-source.ts): per project, kept when the tenant-wide
// pattern (tool + normalised error) failed in enough sessions.

/** Agents named per group (the embedded `engram_sample(agent, 100)`). */
export const AGENT_SAMPLE = 100;

export interface PatternSessionKey {
  tenantId: string;
  projectId: string;
  toolName: string;
  errorPattern: string;
  sessionId: string;
}

/** The smallest message and command of a bucket (SQL MIN), besides its measures. */
export const sampleAggregations = {
  sampleMessage: { terms: { field: 'errorMessage', size: 1, order: { _key: 'asc' as const } } },
  sampleCommand: { terms: { field: 'command', size: 1, order: { _key: 'asc' as const } } },
};

interface PatternGroup {
  key: PatternSessionKey;
  measured: Measured;
  sessionIds: string[];
  messages: string[];
  commands: string[];
}

const firstKey = (bucket: CompositeBucket<unknown>, name: string): string[] =>
  ((bucket[name] as { buckets?: { key: string }[] } | undefined)?.buckets ?? [])
    .slice(0, 1)
    .map((b) => b.key);

/** FailurePatternRow per project, of the patterns reaching `minSessionsPerFinding` sessions. */
export function failurePatternsOf(
  buckets: readonly CompositeBucket<PatternSessionKey>[],
  settings: Pick<FrictionSettings, 'minSessionsPerFinding' | 'maxEvidence'>,
): FailurePatternRow[] {
  const sample = Math.max(settings.maxEvidence, AGENT_SAMPLE);
  const groups = new Map<string, PatternGroup>();
  const clusterSessions = new Map<string, number>();
  for (const bucket of buckets) {
    const k = bucket.key;
    const cluster = JSON.stringify([k.tenantId, k.toolName, k.errorPattern]);
    clusterSessions.set(cluster, (clusterSessions.get(cluster) ?? 0) + 1);
    const id = JSON.stringify([k.tenantId, k.projectId, k.toolName, k.errorPattern]);
    const seen = groups.get(id);
    const measured = measuredOf(bucket);
    const messages = firstKey(bucket, 'sampleMessage');
    const commands = firstKey(bucket, 'sampleCommand');
    groups.set(
      id,
      seen === undefined
        ? { key: k, measured, sessionIds: [k.sessionId], messages, commands }
        : {
            key: seen.key,
            measured: fold(seen.measured, measured, sample),
            sessionIds: [...seen.sessionIds, k.sessionId],
            messages: smallest([...seen.messages, ...messages], 1),
            commands: smallest([...seen.commands, ...commands], 1),
          },
    );
  }
  const rows: FailurePatternRow[] = [];
  for (const { key, measured, sessionIds, messages, commands } of groups.values()) {
    const cluster = JSON.stringify([key.tenantId, key.toolName, key.errorPattern]);
    if ((clusterSessions.get(cluster) ?? 0) < settings.minSessionsPerFinding) continue;
    rows.push({
      tenantId: key.tenantId,
      projectId: key.projectId,
      toolName: key.toolName,
      normalisedError: key.errorPattern,
      sampleMessage: messages[0] ?? '',
      sampleCommand: commands[0] ?? null,
      sessions: sessionIds.length,
      occurrences: measured.count,
      durationMs: measured.durationMs,
      tokens: measured.tokens,
      firstAt: measured.firstAt,
      lastAt: measured.lastAt,
      sessionIds: smallest(sessionIds, settings.maxEvidence),
      eventIds: measured.eventIds.slice(0, settings.maxEvidence),
      agentIds: measured.agentIds.slice(0, AGENT_SAMPLE),
    });
  }
  return rows.sort(
    (a, b) =>
      byCode(a.tenantId, b.tenantId) ||
      byCode(a.toolName, b.toolName) ||
      byCode(a.normalisedError, b.normalisedError) ||
      byCode(a.projectId, b.projectId),
  );
}
