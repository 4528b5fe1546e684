import type { FileAccessSignal } from '@engram/core';
import { describe, expect, it } from 'vitest';
import type { Memory } from '@engram/contracts';
import {
  boundRecent,
  forgetUnemittedConfidences,
  MAX_RECENT_SIGNALS,
  newRecord,
  noteEmitted,
} from './project-record';
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

describe('noteEmitted (issue #20: which re-promotions may propagate)', () => {
  const record = () =>
    newRecord({
      event: { tenantId: 'acme', projectId: 'acme/api' } as ProjectWork,
      partition: 0,
    } as Parameters<typeof newRecord>[0]);
  const version = (confidence: number) => ({ memoryId: 'm1', confidence }) as Memory;

  it('should emit a first version without propagating, and not emit the same version again', () => {
    const r = record();
    expect(noteEmitted(r, version(0.8), 'd1')).toEqual({ emit: true, propagates: false });
    expect(noteEmitted(r, version(0.8), 'd1')).toEqual({ emit: false, propagates: false });
    expect(r.emittedConfidence).toEqual({ m1: 0.8 });
  });

  it('should propagate a re-promotion only when its confidence moved by 0.0625 or more', () => {
    const r = record();
    noteEmitted(r, version(0.8), 'd1');
    // More evidence, confidence barely moved: written, but the memory topic is not read.
    expect(noteEmitted(r, version(0.84), 'd2')).toEqual({ emit: true, propagates: false });
    expect(noteEmitted(r, version(0.91), 'd3')).toEqual({ emit: true, propagates: true });
    expect(r.emittedConfidence).toEqual({ m1: 0.91 });
  });

  it('should let a record written before confidences were kept propagate, and drop withdrawn ones', () => {
    const r = record();
    r.emitted = { m1: 'd1', gone: 'd0' };
    r.emittedConfidence = { gone: 0.5 };
    expect(noteEmitted(r, version(0.81), 'd2')).toEqual({ emit: true, propagates: true });
    delete r.emitted.gone;
    forgetUnemittedConfidences(r);
    expect(r.emittedConfidence).toEqual({ m1: 0.81 });
  });
});
