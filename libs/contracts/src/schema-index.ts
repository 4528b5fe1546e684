/** Raw Avro schema JSON, as stored in `schemas/avro/*.avsc`. */
export type AvroSchemaJson = string | AvroSchemaJson[] | AvroComplexJson;

export interface AvroComplexJson {
  type: AvroSchemaJson;
  name?: string;
  namespace?: string;
  doc?: string;
  fields?: AvroFieldJson[];
  items?: AvroSchemaJson;
  values?: AvroSchemaJson;
  symbols?: string[];
  logicalType?: string;
  default?: unknown;
}

export interface AvroFieldJson {
  name: string;
  type: AvroSchemaJson;
  doc?: string;
  default?: unknown;
}

const PRIMITIVES = new Set([
  'null',
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'bytes',
  'string',
]);
const NAMED_KINDS = new Set(['record', 'error', 'enum', 'fixed']);

export function isPrimitiveName(type: string): boolean {
  return PRIMITIVES.has(type);
}

/** A record, enum or fixed definition (as opposed to an array, map or annotated primitive). */
export function isNamedDefinition(schema: AvroComplexJson): boolean {
  return typeof schema.type === 'string' && NAMED_KINDS.has(schema.type);
}

function qualify(name: string, namespace: string | undefined): string {
  return name.includes('.') || !namespace ? name : `${namespace}.${name}`;
}

/**
 * The named types (records, enums, fixed) of one schema document, by full name, so references by
 * name can be followed the way an Avro parser does.
 */
export class SchemaIndex {
  private readonly named = new Map<string, { def: AvroComplexJson; namespace?: string }>();

  constructor(root: AvroSchemaJson) {
    this.collect(root, undefined);
  }

  /** The full name of a definition found in this document under `namespace`. */
  fullNameOf(def: AvroComplexJson, namespace?: string): string {
    return qualify(def.name!, def.namespace ?? namespace);
  }

  /** The namespace that names inside `def` inherit. */
  namespaceOf(def: AvroComplexJson, enclosing?: string): string | undefined {
    const full = this.fullNameOf(def, enclosing);
    const dot = full.lastIndexOf('.');
    return dot < 0 ? undefined : full.slice(0, dot);
  }

  /** Follows a reference by (short or full) name; undefined if the document does not define it. */
  lookup(
    ref: string,
    namespace?: string,
  ): { def: AvroComplexJson; namespace?: string } | undefined {
    return this.named.get(qualify(ref, namespace)) ?? this.named.get(ref);
  }

  /** The definition of a record by short or full name, wherever it sits in the document. */
  record(name: string): AvroComplexJson | undefined {
    for (const [full, { def }] of this.named) {
      if ((full === name || full.endsWith(`.${name}`)) && def.type === 'record') return def;
    }
    return undefined;
  }

  /**
   * A self-contained copy of `schema`: every named type it uses is defined at its first use and
   * referenced by full name afterwards, so one branch of a union can stand alone.
   */
  inline(schema: AvroSchemaJson, namespace?: string, defined = new Set<string>()): AvroSchemaJson {
    if (typeof schema === 'string') {
      if (isPrimitiveName(schema)) return schema;
      const found = this.lookup(schema, namespace);
      if (!found) throw new Error(`unknown Avro type ${schema}`);
      return this.inline(found.def, found.namespace, defined);
    }
    if (Array.isArray(schema)) {
      return schema.map((branch) => this.inline(branch, namespace, defined));
    }
    if (isNamedDefinition(schema)) {
      const full = this.fullNameOf(schema, namespace);
      if (defined.has(full)) return full;
      defined.add(full);
      const inner = this.namespaceOf(schema, namespace);
      const copy: AvroComplexJson = { ...schema, name: full.slice(full.lastIndexOf('.') + 1) };
      if (inner) copy.namespace = inner;
      if (schema.fields) {
        copy.fields = schema.fields.map((f) => ({
          ...f,
          type: this.inline(f.type, inner, defined),
        }));
      }
      return copy;
    }
    const copy: AvroComplexJson = { ...schema };
    if (typeof schema.type !== 'string') copy.type = this.inline(schema.type, namespace, defined);
    if (schema.items !== undefined) copy.items = this.inline(schema.items, namespace, defined);
    if (schema.values !== undefined) copy.values = this.inline(schema.values, namespace, defined);
    return copy;
  }

  private collect(schema: AvroSchemaJson, namespace: string | undefined): void {
    if (typeof schema === 'string') return;
    if (Array.isArray(schema)) {
      for (const branch of schema) this.collect(branch, namespace);
      return;
    }
    let inner = namespace;
    if (isNamedDefinition(schema)) {
      this.named.set(this.fullNameOf(schema, namespace), { def: schema, namespace });
      inner = this.namespaceOf(schema, namespace);
    } else if (typeof schema.type !== 'string') {
      this.collect(schema.type, namespace);
    }
    for (const field of schema.fields ?? []) this.collect(field.type, inner);
    if (schema.items !== undefined) this.collect(schema.items, namespace);
    if (schema.values !== undefined) this.collect(schema.values, namespace);
  }
}
