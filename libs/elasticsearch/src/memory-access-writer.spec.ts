import type { BulkResponse, MgetResponse } from '@elastic/elasticsearch/lib/api/types';
import { describe, expect, it } from 'vitest';
import {
  accessUpdateOperations,
  accessWriteReport,
  storedCounters,
  type StoredCounters,
} from './memory-access-writer';

const UPDATE = {
  tenantId: 'acme',
  projectId: 'api',
  memoryId: 'm1',
  increment: 2,
  lastAccessedAt: 5_000,
  firstRecordedAt: 4_000,
};

const STORED: StoredCounters = {
  memoryId: 'm1',
  tenantId: 'acme',
  projectId: 'api',
  accessCount: 3,
  lastAccessedAt: 9_000,
  seqNo: 7,
  primaryTerm: 1,
};

describe('access updates on the memories index', () => {
  it('should read counters with their sequence numbers', () => {
    const response = {
      docs: [
        {
          _index: 'mem',
          _id: 'm1',
          found: true,
          _seq_no: 7,
          _primary_term: 1,
          _source: { tenantId: 'acme', projectId: 'api', accessCount: 3, lastAccessedAt: 9_000 },
        },
        { _index: 'mem', _id: 'gone', found: false },
      ],
    } as unknown as MgetResponse<never>;
    expect([...storedCounters(response).values()]).toEqual([STORED]);
  });

  it('should write the new counters guarded by the version read, never moving time back', () => {
    const planned = accessUpdateOperations(
      'mem',
      [UPDATE, { ...UPDATE, memoryId: 'gone' }, { ...UPDATE, memoryId: 'm2', tenantId: 'other' }],
      new Map([
        ['m1', STORED],
        ['m2', { ...STORED, memoryId: 'm2' }],
      ]),
    );
    expect(planned.operations).toEqual([
      { update: { _index: 'mem', _id: 'm1', if_seq_no: 7, if_primary_term: 1 } },
      { doc: { accessCount: 5, lastAccessedAt: 9_000 } },
    ]);
    expect(planned.written).toEqual([UPDATE]);
    // Deleted since, or (a bug) of another tenant: not written.
    expect(planned.missing).toBe(2);
  });

  it('should hand back conflicting updates and count deleted memories as missing', () => {
    const response = {
      errors: true,
      took: 1,
      items: [
        { update: { _index: 'mem', _id: 'a', status: 200 } },
        { update: { _index: 'mem', _id: 'b', status: 409, error: { type: 'version_conflict' } } },
        { update: { _index: 'mem', _id: 'c', status: 404, error: { type: 'document_missing' } } },
      ],
    } as unknown as BulkResponse;
    const updates = ['a', 'b', 'c'].map((memoryId) => ({ ...UPDATE, memoryId }));
    expect(accessWriteReport(response, updates)).toEqual({
      applied: 1,
      missing: 1,
      failed: [updates[1]],
    });
  });
});
