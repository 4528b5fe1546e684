import { describe, expect, it } from 'vitest';
import { CommittedChangelog } from './committed-changelog';
import { decodeStateJson, encodeStateJson } from './state-json';

interface Rec {
  partition: number;
  n: number;
}

describe('CommittedChangelog', () => {
  it('should restore a partition once, leave out unreadable and foreign records, and follow commits', async () => {
    let restores = 0;
    const log = new Map<string, Buffer>([
      ['a', encodeStateJson({ partition: 0, n: 1 })],
      ['b', encodeStateJson({ partition: 1, n: 2 })],
      ['bad', Buffer.from('{not json')],
    ]);
    const unreadable: string[] = [];
    const changelog = new CommittedChangelog<Rec>({
      restore: () => {
        restores += 1;
        return Promise.resolve(new Map(log));
      },
      decode: (value) => decodeStateJson<Rec>(value),
      onUnreadable: (key) => unreadable.push(key),
    });
    const seen: string[] = [];
    await changelog.ensure(0, (key, record) => seen.push(`${key}:${record.n}`));
    await changelog.ensure(0, () => seen.push('again'));
    expect({ restores, seen, unreadable, partitions: changelog.partitions }).toEqual({
      restores: 1,
      seen: ['a:1'],
      unreadable: ['bad'],
      partitions: [0],
    });
    expect(changelog.get(0, 'b')).toBeUndefined();

    changelog.apply(0, 'c', encodeStateJson({ partition: 0, n: 3 }));
    changelog.apply(0, 'a', null);
    expect(changelog.get(0, 'a')).toBeUndefined();
    expect(decodeStateJson<Rec>(changelog.get(0, 'c')!).n).toBe(3);

    // Forgotten (a rebalance, or a commit whose outcome is unknown): the log is read again.
    changelog.forget(0);
    expect(changelog.get(0, 'c')).toBeUndefined();
    await changelog.ensure(0, () => undefined);
    expect(restores).toBe(2);
    expect(changelog.get(0, 'a')).toBeDefined();
  });
});
