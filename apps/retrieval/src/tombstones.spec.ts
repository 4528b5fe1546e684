import type { Memory } from '@engram/contracts';
import { DecodeError } from '@engram/core';
import { contractCodec, decodeDelivered } from '@engram/kafka';
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { memoryRecord } from './testing/records';
import {
  rejectTombstones,
  TOMBSTONE,
  TombstoneAwareRegistry,
  withTombstones,
  type Compacted,
} from './tombstones';

// Nothing listens there: a tombstone must be decoded without asking the registry.
const registry = new TombstoneAwareRegistry('http://127.0.0.1:9');

const tombstoneMessage = (key: string | null): KafkaMessage => ({
  key: key === null ? null : Buffer.from(key),
  value: null,
  offset: '41',
  timestamp: '0',
  attributes: 0,
  headers: {},
});

describe('TombstoneAwareRegistry', () => {
  it('should decode a null value to TOMBSTONE', async () => {
    await expect(registry.decode(null)).resolves.toBe(TOMBSTONE);
  });

  it('should still refuse bytes that are not a Confluent frame', async () => {
    await expect(registry.decode(Buffer.from('{}'))).rejects.toBeInstanceOf(DecodeError);
  });
});

describe('withTombstones', () => {
  const codec = withTombstones(contractCodec('memory.memories.v1'));

  it('should deliver a tombstone of a compacted topic as a record with its key', async () => {
    const item = await decodeDelivered(registry, codec, 2, tombstoneMessage('memory-1'));
    expect(item).toMatchObject({ event: { kind: 'tombstone' }, key: 'memory-1', partition: 2 });
  });

  it('should wrap a value as an upsert and keep validating it', () => {
    const memory = { type: 'Memory' as const, ...memoryRecord({ memoryId: 'memory-1' }) };
    const record = codec.fromAvro(contractCodec('memory.memories.v1').toAvro(memory));
    expect(record).toEqual({ kind: 'upsert', event: memory });
    expect(codec.validate!(record)).toEqual([]);
    const invalid: Compacted<Memory & { type: 'Memory' }> = {
      kind: 'upsert',
      event: { ...memory, tenantId: '' },
    };
    expect(codec.validate!(invalid)).toEqual(['tenantId must not be empty']);
    expect(codec.key(record)).toBe('memory-1');
  });

  it('should refuse to encode a tombstone (it is produced as a null value)', () => {
    expect(() => codec.toAvro({ kind: 'tombstone' })).toThrow(/null value/);
  });
});

describe('rejectTombstones', () => {
  it('should keep a null value poison on a topic without tombstones', async () => {
    const codec = rejectTombstones(contractCodec('agent.prompts.v1'));
    await expect(
      decodeDelivered(registry, codec, 0, tombstoneMessage('session-1')),
    ).rejects.toThrow(DecodeError);
  });
});
