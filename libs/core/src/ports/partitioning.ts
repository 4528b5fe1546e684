/**
 * Which partition a key belongs to: Kafka's default partitioner (the Java client's murmur2, as
 * kafkajs' `Partitioners.DefaultPartitioner` computes it): `(murmur2(utf8(key)) & 0x7fffffff) % n`.
 * The embedded log uses it too, so a session lands on the same partition number in both modes.
 */
export function partitionOfKey(key: string | Uint8Array, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new RangeError(`partition count must be a positive integer, got ${partitions}`);
  }
  const bytes = typeof key === 'string' ? utf8.encode(key) : key;
  return (murmur2(bytes) & 0x7fffffff) % partitions;
}

const utf8 = new TextEncoder();
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** MurmurHash2, 32-bit, as in Kafka's `Utils.murmur2` (signed result). */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const words = length >>> 2;
  for (let i = 0; i < words; i++) {
    const at = i * 4;
    let k = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16) | (data[at + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2] << 16;
  if (rest >= 2) h ^= data[tail + 1] << 8;
  if (rest >= 1) {
    h ^= data[tail];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
