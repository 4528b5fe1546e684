import type { BulkResponse, MgetResponse } from '@elastic/elasticsearch/lib/api/types';
import { describe, expect, it } from 'vitest';
import {
  accessUpdateOperations,
  accessWriteReport,
  countersRequest,
  mirroredCounters,
  storedCounters,
  withCountedAccess,
  type StoredCounters,
} from './memory-access';
import { isNewerCounter } from './access-counter-mirror';

const INDICES = { memories: 'mem', memoryAccess: 'acc' };

const UPDATE = {
  tenantId: 'acme',
  projectId: 'api',
  memoryId: 'm1',
  increment: 2,
  lastAccessedAt: 5_000,
  firstRecordedAt: 4_000,
};

const COUNTED: StoredCounters = {
  memoryId: 'm1',
  tenantId: 'acme',
  projectId: 'api',
  accessCount: 3,
  lastAccessedAt: 9_000,
  version: { seqNo: 7, primaryTerm: 1 },
};

const scope = { tenantId: 'acme', projectId: 'api' };

describe('access counters apart from the memory documents', () => {
  it('should read each memory and its counter in one request', () => {
    const fields = ['tenantId', 'projectId', 'accessCount', 'lastAccessedAt'];
    expect(countersRequest(INDICES, ['m1', 'm2']).docs).toEqual([
      { _index: 'mem', _id: 'm1', _source: fields },
      { _index: 'acc', _id: 'm1', _source: fields },
      { _index: 'mem', _id: 'm2', _source: fields },
      { _index: 'acc', _id: 'm2', _source: fields },
    ]);
  });

  it("should read the counter with its version, else the memory's own counts", () => {
    const response = {
      docs: [
        {
          _index: 'mem',
          _id: 'm1',
          found: true,
          _source: { ...scope, accessCount: 1, lastAccessedAt: 100 },
        },
        {
          _index: 'acc',
          _id: 'm1',
          found: true,
          _seq_no: 7,
          _primary_term: 1,
          _source: { ...scope, accessCount: 3, lastAccessedAt: 9_000 },
        },
        {
          _index: 'mem',
          _id: 'fresh',
          found: true,
          _source: { ...scope, accessCount: 0, lastAccessedAt: 200 },
        },
        { _index: 'acc', _id: 'fresh', found: false },
        { _index: 'mem', _id: 'gone', found: false },
        {
          _index: 'acc',
          _id: 'gone',
          found: true,
          _seq_no: 2,
          _primary_term: 1,
          _source: { ...scope, accessCount: 5, lastAccessedAt: 1 },
        },
      ],
    } as unknown as MgetResponse<never>;
    const stored = storedCounters(['m1', 'fresh', 'gone'], response);
    expect(stored.get('m1')).toEqual(COUNTED);
    expect(stored.get('fresh')).toEqual({
      memoryId: 'fresh',
      ...scope,
      accessCount: 0,
      lastAccessedAt: 200,
      version: null,
    });
    // A counter whose memory is gone (deleted in between) is not counted on.
    expect(stored.has('gone')).toBe(false);
  });

  it('should rewrite a counter guarded by the version read and create a new one, never moving time back', () => {
    const planned = accessUpdateOperations(
      'acc',
      [
        UPDATE,
        { ...UPDATE, memoryId: 'fresh' },
        { ...UPDATE, memoryId: 'gone' },
        { ...UPDATE, memoryId: 'm2', tenantId: 'other' },
      ],
      new Map([
        ['m1', COUNTED],
        [
          'fresh',
          { ...COUNTED, memoryId: 'fresh', accessCount: 1, lastAccessedAt: 100, version: null },
        ],
        ['m2', { ...COUNTED, memoryId: 'm2' }],
      ]),
    );
    expect(planned.operations).toEqual([
      { index: { _index: 'acc', _id: 'm1', if_seq_no: 7, if_primary_term: 1 } },
      { ...scope, memoryId: 'm1', accessCount: 5, lastAccessedAt: 9_000 },
      { create: { _index: 'acc', _id: 'fresh' } },
      { ...scope, memoryId: 'fresh', accessCount: 3, lastAccessedAt: 5_000 },
    ]);
    expect(planned.written).toEqual([UPDATE, { ...UPDATE, memoryId: 'fresh' }]);
    expect(planned.counters).toEqual([
      { ...scope, memoryId: 'm1', accessCount: 5, lastAccessedAt: 9_000 },
      { ...scope, memoryId: 'fresh', accessCount: 3, lastAccessedAt: 5_000 },
    ]);
    // Deleted since, or (a bug) of another tenant: not written.
    expect(planned.missing).toBe(2);
  });

  it('should hand back conflicting writes and count deleted counters as missing', () => {
    const response = {
      errors: true,
      took: 1,
      items: [
        { index: { _index: 'acc', _id: 'a', status: 200 } },
        { index: { _index: 'acc', _id: 'b', status: 409, error: { type: 'version_conflict' } } },
        { create: { _index: 'acc', _id: 'c', status: 409, error: { type: 'version_conflict' } } },
        { update: { _index: 'acc', _id: 'd', status: 404, error: { type: 'document_missing' } } },
        { create: { _index: 'acc', _id: 'e', status: 201 } },
      ],
    } as unknown as BulkResponse;
    const updates = ['a', 'b', 'c', 'd', 'e'].map((memoryId) => ({ ...UPDATE, memoryId }));
    expect(accessWriteReport(response, updates)).toEqual({
      applied: 2,
      missing: 1,
      failed: [updates[1], updates[2]],
    });
  });

  it("should start from the mirror's counter and version, or seed a first counter from what the reader saw", () => {
    const mirrored = { ...scope, accessCount: 6, lastAccessedAt: 800, seqNo: 11, primaryTerm: 2 };
    const seen = { accessCount: 8, lastAccessedAt: 500 };
    expect(mirroredCounters(UPDATE, mirrored)).toEqual({
      ...COUNTED,
      accessCount: 6,
      lastAccessedAt: 800,
      version: { seqNo: 11, primaryTerm: 2 },
    });
    // The record was re-published with higher counts than its counter: the larger of each.
    expect(mirroredCounters({ ...UPDATE, seen }, mirrored)).toMatchObject({
      accessCount: 8,
      lastAccessedAt: 800,
      version: { seqNo: 11, primaryTerm: 2 },
    });
    // No counter yet: created from the counts the reader saw, in the update's own scope.
    expect(mirroredCounters({ ...UPDATE, seen }, undefined)).toEqual({
      memoryId: 'm1',
      ...scope,
      ...seen,
      version: null,
    });
    // Neither: the record and counter must be read from Elasticsearch.
    expect(mirroredCounters(UPDATE, undefined)).toBeNull();
  });

  it('should order versions of a counter by primary term, then sequence number', () => {
    const at = (primaryTerm: number, seqNo: number) => ({
      ...scope,
      accessCount: 1,
      lastAccessedAt: 1,
      seqNo,
      primaryTerm,
    });
    expect(isNewerCounter(at(1, 5), undefined)).toBe(true);
    expect(isNewerCounter(at(1, 6), at(1, 5))).toBe(true);
    expect(isNewerCounter(at(1, 5), at(1, 5))).toBe(false);
    expect(isNewerCounter(at(1, 4), at(1, 5))).toBe(false);
    expect(isNewerCounter(at(2, 1), at(1, 9))).toBe(true);
    expect(isNewerCounter(at(1, 9), at(2, 1))).toBe(false);
  });

  it("should fold a counter of the memory's own scope into it, and only such a counter", () => {
    const memory = { ...scope, accessCount: 1, lastAccessedAt: 100, content: 'x' };
    const counted = new Map([
      ['m1', { ...scope, accessCount: 4, lastAccessedAt: 900 }],
      ['m2', { tenantId: 'other', projectId: 'api', accessCount: 9, lastAccessedAt: 999 }],
    ]);
    expect(withCountedAccess('m1', memory, counted)).toEqual({
      ...memory,
      accessCount: 4,
      lastAccessedAt: 900,
    });
    expect(withCountedAccess('m2', memory, counted)).toBe(memory);
    expect(withCountedAccess('m3', memory, counted)).toBe(memory);
  });
});
