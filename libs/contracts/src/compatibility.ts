import type { Type } from 'avsc';
import { parseAvroType } from './avro-schemas';
import type { AvroSchemaJson } from './schema-index';

/**
 * BACKWARD compatibility as the Schema Registry checks it: a reader on `newSchema` can read every
 * record written with `oldSchema` (Avro schema resolution; avsc `createResolver`). Adding a field
 * is compatible only with a default; removing a field is; adding an enum symbol is.
 */
export function isBackwardCompatible(
  oldSchema: AvroSchemaJson | Type,
  newSchema: AvroSchemaJson | Type,
): boolean {
  return backwardIncompatibility(oldSchema, newSchema) === undefined;
}

/** Why `newSchema` cannot read data written with `oldSchema`, or undefined if it can. */
export function backwardIncompatibility(
  oldSchema: AvroSchemaJson | Type,
  newSchema: AvroSchemaJson | Type,
): string | undefined {
  const writer = parseAvroType(oldSchema);
  const reader = parseAvroType(newSchema);
  try {
    reader.createResolver(writer);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
