import { describe, expect, it } from 'vitest';
import { KeyedChangelogState } from './keyed-changelog-state';
import { decodeStateJson, encodeStateJson } from './state-json';

interface Rec {
  v: number;
  partition: number;
  n: number;
}

/** A changelog in memory: the latest value per key, whatever partition is asked for. */
function changelogOf(entries: [string, Rec | string][]) {
  const log = new Map<string, Buffer>(
    entries.map(([key, value]) => [
      key,
      typeof value === 'string' ? Buffer.from(value) : encodeStateJson(value),
    ]),
  );
  const restored: number[][] = [];
  const restore = (partitions: number[]) => {
    restored.push(partitions);
    return Promise.resolve(new Map(log));
  };
  return { log, restored, restore };
}

function stateOn(changelog: ReturnType<typeof changelogOf>, unreadable: string[] = []) {
  return new KeyedChangelogState<Rec>({
    changelogTopic: 'stage.changelog',
    restore: changelog.restore,
    accepts: (record) => record.v === 1,
    onUnreadable: (key) => unreadable.push(key),
  });
}

describe('KeyedChangelogState', () => {
  it('should restore a partition once, leaving out unreadable, foreign and unknown-version records', async () => {
    const changelog = changelogOf([
      ['a', { v: 1, partition: 0, n: 1 }],
      ['b', { v: 1, partition: 1, n: 2 }],
      ['old', { v: 0, partition: 0, n: 3 }],
      ['bad', '{not json'],
    ]);
    const unreadable: string[] = [];
    const state = stateOn(changelog, unreadable);
    await state.restore([0, 0]);
    await state.restore([0]);
    expect(changelog.restored).toEqual([[0]]);
    expect(unreadable).toEqual(['bad']);
    expect(state.records()).toEqual([{ v: 1, partition: 0, n: 1 }]);
    expect(state.current(0, 'b')).toBeUndefined();
    expect(state.ownedRecords()).toEqual([
      { key: 'a', partition: 0, record: { v: 1, partition: 0, n: 1 } },
    ]);
  });

  it('should show a transaction its staged records, write them to the changelog, and keep them on commit', async () => {
    const state = stateOn(changelogOf([['a', { v: 1, partition: 0, n: 1 }]]));
    state.begin();
    await state.restore([0]);
    state.stage('a', { v: 1, partition: 0, n: 2 });
    state.stage('c', { v: 1, partition: 0, n: 3 });
    expect(state.current(0, 'a')?.n).toBe(2);
    expect(state.records().map((r) => r.n)).toEqual([1]);
    const { topic, messages } = state.changelog();
    expect(topic).toBe('stage.changelog');
    expect(
      messages.map((m) => ({
        key: m.key,
        to: m.partition,
        record: decodeStateJson<Rec>(m.value as Buffer),
      })),
    ).toEqual([
      { key: 'a', to: 0, record: { v: 1, partition: 0, n: 2 } },
      { key: 'c', to: 0, record: { v: 1, partition: 0, n: 3 } },
    ]);
    state.commit();
    expect(state.touched.size).toBe(0);
    expect(state.records().map((r) => r.n)).toEqual([2, 3]);
  });

  it('should write a removal as a tombstone and drop the key on commit', async () => {
    const state = stateOn(
      changelogOf([
        ['a', { v: 1, partition: 0, n: 1 }],
        ['b', { v: 1, partition: 0, n: 2 }],
      ]),
    );
    state.begin();
    await state.restore([0]);
    state.remove(0, 'a');
    expect(state.current(0, 'a')).toBeUndefined();
    expect(state.touched.size).toBe(0);
    expect(state.changelog().messages).toEqual([{ key: 'a', partition: 0, value: null }]);
    expect(state.records().map((r) => r.n)).toEqual([1, 2]);
    state.commit();
    expect(state.records().map((r) => r.n)).toEqual([2]);
  });

  it('should forget everything on abort and restore from the changelog on next use', async () => {
    const changelog = changelogOf([['a', { v: 1, partition: 0, n: 1 }]]);
    const state = stateOn(changelog);
    await state.restore([0]);
    state.begin();
    state.stage('a', { v: 1, partition: 0, n: 9 });
    state.abort();
    expect(state.touched.size).toBe(0);
    expect(state.records()).toEqual([]);
    await state.restore([0]);
    expect(changelog.restored).toEqual([[0], [0]]);
    expect(state.current(0, 'a')?.n).toBe(1);
  });

  it('should drop the partitions a rebalance takes away and sweep only the owned ones', async () => {
    const changelog = changelogOf([
      ['a', { v: 1, partition: 0, n: 1 }],
      ['b', { v: 1, partition: 1, n: 2 }],
    ]);
    const state = stateOn(changelog);
    state.onAssignment([0, 1]);
    await state.restoreOwned();
    expect(state.ownedRecords().map(({ key, partition }) => ({ key, partition }))).toEqual([
      { key: 'a', partition: 0 },
      { key: 'b', partition: 1 },
    ]);
    state.onAssignment([1]);
    expect(state.records()).toEqual([{ v: 1, partition: 1, n: 2 }]);
    expect(state.ownedRecords().map(({ key }) => key)).toEqual(['b']);
  });
});
