import type { StreamPlatform } from './stream-platform';

/**
 * Where a group stands on several co-partitioned input topics: their end offsets and the group's
 * committed offsets, per partition, named as the stage names its inputs. Stages use it to hold an
 * event back until the group has consumed what was on the other inputs when it arrived (a
 * SessionEnded waits for the session's prompts and tool calls).
 */
export interface NamedInputPositions<K extends string> {
  endOffsets(partition: number): Promise<Record<K, number>>;
  committedOffsets(partitions: number[]): Promise<Map<number, Record<K, number>>>;
}

export function inputPositionsOn<K extends string>(
  platform: StreamPlatform,
  groupId: string,
  topics: Record<K, string>,
): NamedInputPositions<K> {
  const names = Object.keys(topics) as K[];
  return {
    async endOffsets(partition) {
      const ends = await Promise.all(
        names.map((name) => platform.endOffset(topics[name], partition)),
      );
      return Object.fromEntries(names.map((name, i) => [name, ends[i]])) as Record<K, number>;
    },
    async committedOffsets(partitions) {
      const committed = await Promise.all(
        names.map((name) => platform.committedOffsets(groupId, topics[name], partitions)),
      );
      return new Map(
        partitions.map((p) => [
          p,
          Object.fromEntries(names.map((name, i) => [name, committed[i].get(p) ?? 0])) as Record<
            K,
            number
          >,
        ]),
      );
    },
  };
}
