import { valueSubject } from '@engram/core';
import { AVRO_TYPE_OPTIONS, loadAvroSchema, TOPIC_LIST } from '@engram/contracts';
import type { AvroRegistry, Compatibility } from './avro-registry';

export { contractCodec } from '@engram/core';

/** The avsc options every contract codec is read and written with (a fresh copy: avsc mutates). */
export function contractAvroOptions(): { wrapUnions: 'auto' } {
  return { ...AVRO_TYPE_OPTIONS } as { wrapUnions: 'auto' };
}

/**
 * Registers the value schema of every contract topic under `<topic>-value` and sets each subject
 * to `compatibility`, so a later incompatible schema change is refused by the registry itself.
 * Idempotent: registering an identical schema returns the existing id.
 */
export async function registerContractSchemas(
  registry: AvroRegistry,
  compatibility: Compatibility = 'BACKWARD',
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const spec of TOPIC_LIST) {
    const subject = valueSubject(spec.topic);
    ids.set(subject, await registry.register(subject, loadAvroSchema(spec.avroFile) as object));
    await registry.setSubjectCompatibility(subject, compatibility);
  }
  return ids;
}
