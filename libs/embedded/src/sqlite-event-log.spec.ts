import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MisconfigurationError, partitionOfKey } from '@engram/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteEventLog, UnknownTopicError } from './sqlite-event-log';
import { tsNodeArgs } from './testing/ts-child';

describe('SqliteEventLog', () => {
  let dir: string;
  let log: SqliteEventLog;
  let now = 1_700_000_000_000;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-log-'));
    log = SqliteEventLog.open({ dataDir: dir, clock: () => now });
  });

  afterEach(() => {
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const values = (topic: string, partition: number) =>
    log.read(topic, partition, 0, 1_000).map((r) => r.value);

  it('should keep per-partition order with dense offsets from 0: by key, pinned, round robin', () => {
    log.ensureTopic('t', 3);
    const placed = log.append('t', [
      { key: 'session-a', value: 'a1' },
      { key: 'session-b', value: 'b1' },
      { key: 'session-a', value: 'a2' },
      { value: 'pinned', partition: 2 },
      { value: 'rr0' },
      { value: 'rr1' },
    ]);
    const a = partitionOfKey('session-a', 3);
    expect(placed[0]).toEqual({ partition: a, offset: 0 });
    expect(placed[2].partition).toBe(a);
    expect(placed.slice(4).map((p) => p.partition)).toEqual([0, 1]);
    log.append('t', [{ key: 'session-a', value: 'a3' }]);

    expect(values('t', a).filter((v) => String(v).startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    for (let partition = 0; partition < 3; partition++) {
      const offsets = log.read('t', partition, 0, 100).map((r) => r.offset);
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    const ends = log.endOffsets('t');
    expect(ends.reduce((sum, end) => sum + end, 0)).toBe(7);
    expect(values('t', 2)).toContain('pinned');
  });

  it('should create topics idempotently and refuse another partition count or compaction', () => {
    log.ensureTopic('t', 3);
    log.append('t', [{ key: 'k', value: 'v' }]);
    log.ensureTopic('t', 3);
    expect(log.topic('t')).toEqual({ name: 't', partitions: 3, compacted: false });
    expect(log.endOffsets('t').reduce((s, e) => s + e)).toBe(1);
    expect(() => log.ensureTopic('t', 4)).toThrow(MisconfigurationError);
    expect(() => log.ensureTopic('t', 3, { compacted: true })).toThrow(/refusing 3, compacted/);
    log.ensureTopic('u', 2, { withDeadLetter: true });
    expect(log.topics().map((t) => `${t.name}:${t.partitions}`)).toEqual(['t:3', 'u:2', 'u.dlq:1']);
    expect(() => log.ensureTopic('v', 0)).toThrow(RangeError);
  });

  it('should refuse unknown topics and partitions', () => {
    log.ensureTopic('t', 2);
    expect(() => log.append('nope', [{ value: 'x' }])).toThrow(UnknownTopicError);
    expect(() => log.read('nope', 0, 0, 1)).toThrow(UnknownTopicError);
    expect(() => log.append('t', [{ value: 'x', partition: 2 }])).toThrow(RangeError);
    expect(() => log.read('t', 0, -1, 1)).toThrow(RangeError);
    expect(log.endOffsets('t')).toEqual([0, 0]);
  });

  it('should return values, keys, headers and timestamps as written', () => {
    log.ensureTopic('t', 1);
    log.append('t', [
      { key: 'k', value: '{"type":"X"}', headers: { a: 'x', b: Buffer.from('y'), c: ['1', '2'] } },
      { key: Buffer.from('bytes-key'), value: Buffer.from([0, 255, 1]), timestamp: 42 },
      { key: 'gone', value: null },
    ]);
    const [text, bytes, tombstone] = log.read('t', 0, 0, 10);
    expect(text).toMatchObject({
      key: 'k',
      value: '{"type":"X"}',
      headers: { a: 'x', b: 'y', c: ['1', '2'] },
      timestamp: now,
    });
    expect(bytes.key).toBe('bytes-key');
    expect(bytes.value).toEqual(Buffer.from([0, 255, 1]));
    expect(bytes.timestamp).toBe(42);
    expect(bytes.headers).toEqual({});
    expect(tombstone.value).toBeNull();
  });

  it('should keep records and committed offsets when the database is reopened', () => {
    log.ensureTopic('t', 2);
    log.append('t', [
      { value: 'a', partition: 0 },
      { value: 'b', partition: 0 },
      { value: 'c', partition: 1 },
    ]);
    log.commitOffsets('g', 't', new Map([[0, 2]]));
    log.commitOffsets('g', 't', new Map([[1, 1]]));
    log.commitOffsets('other', 't', new Map([[0, 1]]));
    log.close();

    log = SqliteEventLog.open({ dataDir: dir });
    expect(log.committedOffsets('g', 't')).toEqual(
      new Map([
        [0, 2],
        [1, 1],
      ]),
    );
    expect(log.committedOffsets('other', 't')).toEqual(new Map([[0, 1]]));
    expect(log.committedOffsets('new', 't')).toEqual(new Map());
    expect(values('t', 0)).toEqual(['a', 'b']);
    log.append('t', [{ value: 'd', partition: 0 }]);
    expect(log.read('t', 0, 2, 10).map((r) => r.offset)).toEqual([2]);
    expect(() => log.commitOffsets('g', 't', new Map([[1, 5]]))).toThrow(RangeError);
  });

  it('should commit appends and offsets of one transaction together, or none of them', () => {
    log.ensureTopic('in', 1);
    log.ensureTopic('out', 1);
    log.append('in', [{ value: 'x' }]);
    expect(() =>
      log.transaction(() => {
        log.append('out', [{ value: 'X' }]);
        log.commitOffsets('g', 'in', new Map([[0, 1]]));
        throw new Error('crash before commit');
      }),
    ).toThrow('crash before commit');
    expect(log.endOffsets('out')).toEqual([0]);
    expect(log.committedOffsets('g', 'in')).toEqual(new Map());

    log.transaction(() => {
      log.append('out', [{ value: 'X' }]);
      log.commitOffsets('g', 'in', new Map([[0, 1]]));
    });
    expect(values('out', 0)).toEqual(['X']);
    expect(log.committedOffsets('g', 'in')).toEqual(new Map([[0, 1]]));
  });

  it('should give the latest value per key, a tombstone removing it, compacted or not', () => {
    for (const [topic, compacted] of [
      ['changelog', true],
      ['plain', false],
    ] as const) {
      log.ensureTopic(topic, 2, { compacted });
      log.append(topic, [
        { key: 'a', value: 'a1', partition: 0 },
        { key: 'b', value: Buffer.from('b1'), partition: 0 },
        { key: 'a', value: 'a2', partition: 0 },
        { key: 'c', value: 'c1', partition: 0 },
        { key: 'b', value: null, partition: 0 },
        { key: 'd', value: 'd1', partition: 1 },
        { key: 'c', value: null, partition: 0 },
        { key: 'c', value: 'c2', partition: 0 },
      ]);
      const latest = log.latestByKey(topic, [0]);
      expect(Object.fromEntries([...latest].map(([k, v]) => [k, v.toString()]))).toEqual({
        a: 'a2',
        c: 'c2',
      });
      expect([...log.latestByKey(topic, [0, 1]).keys()].sort()).toEqual(['a', 'c', 'd']);
    }
    expect(() => log.append('changelog', [{ value: 'no key' }])).toThrow(/needs a key/);
  });

  it('should compact superseded records, keeping fresh tombstones and every offset', () => {
    log.ensureTopic('changelog', 1, { compacted: true });
    log.append('changelog', [
      { key: 'a', value: 'a1' },
      { key: 'a', value: 'a2' },
      { key: 'b', value: 'b1' },
      { key: 'b', value: null },
    ]);
    expect(log.compact('changelog')).toBe(2);
    expect(log.read('changelog', 0, 0, 10).map((r) => [r.offset, r.key, r.value])).toEqual([
      [1, 'a', 'a2'],
      [3, 'b', null],
    ]);
    now += 2 * 24 * 60 * 60 * 1000;
    expect(log.compact('changelog')).toBe(1);
    expect(log.latestByKey('changelog', [0])).toEqual(new Map([['a', Buffer.from('a2')]]));
    expect(log.endOffsets('changelog')).toEqual([4]);
  });

  it('should replay a partition or the whole topic from any offset, page by page', () => {
    log.ensureTopic('t', 2);
    log.append(
      't',
      Array.from({ length: 25 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })),
    );
    const fromFive = [...log.replay('t', { partition: 1, fromOffset: 5, pageSize: 2 })];
    expect(fromFive.map((r) => r.offset)).toEqual([5, 6, 7, 8, 9, 10, 11]);
    expect(fromFive[0].value).toBe('v11');
    expect([...log.replay('t', { pageSize: 4 })]).toHaveLength(25);
  });

  it('should keep offsets dense when two connections append to the same file', () => {
    log.ensureTopic('t', 1);
    const other = SqliteEventLog.open({ dataDir: dir });
    try {
      for (let i = 0; i < 20; i++) {
        (i % 2 === 0 ? log : other).append('t', [{ value: `v${i}` }, { value: `w${i}` }]);
      }
      expect(other.read('t', 0, 0, 100).map((r) => r.offset)).toEqual(
        Array.from({ length: 40 }, (_, i) => i),
      );
      expect(log.endOffsets('t')).toEqual([40]);
    } finally {
      other.close();
    }
  });

  it('should lose no acknowledged record when the appending process is SIGKILLed', async () => {
    const child = spawn(process.execPath, tsNodeArgs(dir, 'append-child.ts', [dir, 'durable']), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let acked = -1;
    let buffered = '';
    await new Promise<void>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) acked = Number(line.replace('acked ', ''));
        // Kill it mid-stream, while it is appending as fast as it can. (Each append is an
        // fsync: on a machine busy with the servers' own fsyncs, 100 of them took over 180 s.)
        if (acked >= 30) {
          child.removeAllListeners('exit');
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((resolve) => child.once('exit', resolve));

    const reopened = SqliteEventLog.open({ dataDir: dir });
    try {
      const stored = [...reopened.replay('durable')].map(
        (r) => JSON.parse(String(r.value)) as { i: number; j: number },
      );
      const appends = new Set(stored.map((r) => r.i));
      for (let i = 0; i <= acked; i++) expect(appends.has(i)).toBe(true);
      // Whole appends only: each append i wrote 1 + i % 3 records, all or none.
      const lastAppend = Math.max(...appends);
      expect(lastAppend).toBeGreaterThanOrEqual(acked);
      const expected = Array.from({ length: lastAppend + 1 }, (_, i) => 1 + (i % 3));
      expect(stored).toHaveLength(expected.reduce((sum, n) => sum + n, 0));
      for (let partition = 0; partition < 2; partition++) {
        const offsets = reopened.read('durable', partition, 0, 100_000).map((r) => r.offset);
        expect(offsets).toEqual(offsets.map((_, i) => i));
      }
    } finally {
      reopened.close();
    }
    // The child compiles its TypeScript on start: slow when the machine is busy with other tests.
  }, 180_000);
});
