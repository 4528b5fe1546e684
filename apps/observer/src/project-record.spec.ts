import type { FileAccessSignal } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { boundRecent, MAX_RECENT_SIGNALS, newRecord } from './project-record';
import type { ProjectWork } from './project-work';

function access(at: number): FileAccessSignal {
  return {
    type: 'file_access',
    signalId: `s${at}:a.ts`,
    sessionId: `s${at}`,
    at,
    stepIndex: 0,
    promptId: 1,
    eventIds: [],
    filePath: 'a.ts',
    module: '.',
    toolName: 'Read',
    access: 'read',
    firstInSession: true,
  };
}

describe('boundRecent (issue #19)', () => {
  it('should fold the oldest raw signals beyond the bound into the base, moving the horizon', () => {
    const work = { tenantId: 'acme', projectId: 'acme/api' } as ProjectWork;
    const record = newRecord({ event: work, partition: 0 } as Parameters<typeof newRecord>[0]);
    const signals = Array.from({ length: MAX_RECENT_SIGNALS + 5 }, (_, i) => access(i + 1));
    record.recent = { signals: [...signals].reverse(), summaries: [] };
    boundRecent(record, 500);
    expect(record.horizon).toBe(5);
    expect(record.recent.signals).toHaveLength(MAX_RECENT_SIGNALS);
    expect(record.stats.coAccess.files['a.ts']?.sessionCount).toBe(5);
    boundRecent(record, 500); // within the bound: nothing moves
    expect(record.horizon).toBe(5);
  });
});
