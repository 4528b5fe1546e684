import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { AvroOptions } from '@kafkajs/confluent-schema-registry/dist/@types';
import { Type } from 'avsc';
import {
  DecodeError,
  DownstreamUnavailableError,
  EngramError,
  errorMessage,
  SchemaNotFoundError,
} from '@engram/core';
import { AVRO_TYPE_OPTIONS } from '@engram/contracts';
import { readWireFrame } from './wire-format';

export type Compatibility = 'BACKWARD' | 'FORWARD' | 'FULL' | 'NONE';

interface RegistryResponseError {
  status?: number;
  message?: string;
}

/**
 * The Confluent-compatible Schema Registry at the edge: registration, encoding and decoding in the
 * Confluent wire format, with every failure classified (unknown schema id → not retriable,
 * registry down → retriable, bad bytes → DecodeError). Schemas are cached by id by the underlying
 * client, so a decode costs one registry request per unseen id.
 */
export class AvroRegistry {
  private readonly client: SchemaRegistry;
  private readonly idsBySubject = new Map<string, number>();
  /** Reader types by reader schema, and per reader the resolver from each writer schema id. */
  private readonly readers = new WeakMap<object, ReaderType>();
  /**
   * Writer types by schema id, as promises: the client caches only finished lookups, so a batch
   * of concurrent encodes on a cold cache sent one registry request and parsed the schema once
   * per record (a third of the segmenter's CPU).
   */
  private readonly writers = new Map<number, Promise<Type>>();

  constructor(
    private readonly url: string,
    // Contract topics are written with AVRO_TYPE_OPTIONS; the decoder must build the same types.
    private readonly avroOptions: AvroOptions = { ...AVRO_TYPE_OPTIONS },
  ) {
    this.client = new SchemaRegistry(
      { host: url, retry: { retries: 2, maxRetryTimeInSecs: 2 } },
      { forSchemaOptions: avroOptions },
    );
  }

  /** Sets the registry-wide default compatibility (`PUT /config`). */
  async setGlobalCompatibility(level: Compatibility): Promise<void> {
    await this.request('PUT', '/config', { compatibility: level });
  }

  /**
   * Sets a subject's compatibility (`PUT /config/{subject}`). Register first: Confluent answers 404
   * for a subject it does not know (Apicurio accepts it), so this order works on both.
   */
  async setSubjectCompatibility(subject: string, level: Compatibility): Promise<void> {
    await this.request('PUT', `/config/${encodeURIComponent(subject)}`, { compatibility: level });
  }

  /**
   * Registers (or finds) `schema` under `subject` and returns its id. Registration goes straight to
   * the REST API because the client's `register()` refuses schemas without a name, i.e. the
   * top-level unions our lifecycle and boundary topics use.
   */
  async register(subject: string, schema: object): Promise<number> {
    const path = `/subjects/${encodeURIComponent(subject)}/versions`;
    const { id } = (await this.request('POST', path, avroSchemaBody(schema))) as {
      id: number;
    };
    this.idsBySubject.set(subject, id);
    return id;
  }

  /** Asks the registry whether `schema` may become the next version of `subject`. */
  async isCompatible(subject: string, schema: object): Promise<boolean> {
    const path = `/compatibility/subjects/${encodeURIComponent(subject)}/versions/latest`;
    return (
      (await this.request('POST', path, avroSchemaBody(schema))) as { is_compatible: boolean }
    ).is_compatible;
  }

  idOf(subject: string): number {
    const id = this.idsBySubject.get(subject);
    if (id === undefined) throw new SchemaNotFoundError(`subject ${subject} is not registered`);
    return id;
  }

  async encode(schemaId: number, value: unknown): Promise<Buffer> {
    try {
      await this.writerOf(schemaId);
      return await this.client.encode(schemaId, value);
    } catch (error) {
      throw classifyRegistryError(error, { schemaId });
    }
  }

  /**
   * Decodes a framed record. With `readerSchema`, Avro schema resolution maps the writer's schema
   * onto the reader's (schema evolution); a record written with an unrelated schema fails here.
   * The reader type and its resolver per writer id are built once: the client rebuilds the
   * reader type on every call, which cost more than everything else the segmenter did.
   */
  async decode<T>(bytes: Buffer | null, readerSchema?: object): Promise<T> {
    const { schemaId, payload } = readWireFrame(bytes);
    try {
      const writer = await this.writerOf(schemaId);
      if (!readerSchema) return writer.fromBuffer(payload) as T;
      const reader = this.readerOf(readerSchema);
      let resolver = reader.resolvers.get(schemaId);
      if (resolver === undefined) {
        resolver = reader.type.equals(writer) ? null : reader.type.createResolver(writer);
        reader.resolvers.set(schemaId, resolver);
      }
      return (
        resolver ? reader.type.fromBuffer(payload, resolver) : reader.type.fromBuffer(payload)
      ) as T;
    } catch (error) {
      throw classifyRegistryError(error, { schemaId });
    }
  }

  private writerOf(schemaId: number): Promise<Type> {
    let writer = this.writers.get(schemaId);
    if (!writer) {
      writer = this.client.getSchema(schemaId) as unknown as Promise<Type>;
      // A failed lookup (registry down) is not remembered: the retry asks again.
      writer.catch(() => this.writers.delete(schemaId));
      this.writers.set(schemaId, writer);
    }
    return writer;
  }

  private readerOf(schema: object): ReaderType {
    let reader = this.readers.get(schema);
    if (!reader) {
      reader = {
        type: Type.forSchema(schema as never, { ...this.avroOptions }),
        resolvers: new Map(),
      };
      this.readers.set(schema, reader);
    }
    return reader;
  }

  private async request(method: string, path: string, body: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new DownstreamUnavailableError(
        `schema registry unreachable at ${this.url}`,
        {},
        { cause: error },
      );
    }
    const text = await response.text();
    if (!response.ok) {
      throw classifyRegistryError({ status: response.status, message: text }, { method, path });
    }
    return text ? JSON.parse(text) : undefined;
  }
}

interface ReaderType {
  type: Type;
  /** null: the writer's schema equals the reader's, no resolution needed. */
  resolvers: Map<number, ReturnType<Type['createResolver']> | null>;
}

/**
 * The Confluent request body for an Avro schema. `schemaType` is optional for Avro in Confluent's
 * API, but Apicurio cannot infer the type of a top-level union (a JSON array) and answers 422
 * "Failed to discover artifact type" without it.
 */
function avroSchemaBody(schema: object): { schema: string; schemaType: 'AVRO' } {
  return { schema: JSON.stringify(schema), schemaType: 'AVRO' };
}

const NETWORK_FAILURE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|socket hang up|fetch failed/i;

/**
 * Registry HTTP errors carry a status; avsc decoding errors do not. 404 means the schema id is
 * unknown (not retriable); 5xx and connection failures mean the registry is down (retriable);
 * anything else about the bytes is a DecodeError.
 */
export function classifyRegistryError(error: unknown, context: Record<string, unknown>): Error {
  if (error instanceof EngramError) return error;
  const response = (error ?? {}) as RegistryResponseError;
  const { status } = response;
  // HTTP failures arrive as { status, message } (not an Error): keep the registry's own words.
  const message =
    typeof response.message === 'string' && !(error instanceof Error)
      ? `HTTP ${status ?? '?'}: ${response.message}`
      : errorMessage(error);
  const options = { cause: error };
  if (status === 404) return new SchemaNotFoundError(message, context, options);
  if ((status !== undefined && status >= 500) || NETWORK_FAILURE.test(message)) {
    return new DownstreamUnavailableError(`schema registry: ${message}`, context, options);
  }
  if (status === 409 || status === 422) return new SchemaRejectedError(message, context, options);
  return new DecodeError(message, context, options);
}

/** The registry refused a schema (incompatible or invalid). */
export class SchemaRejectedError extends EngramError {
  readonly code = 'SCHEMA_REJECTED';
  readonly retriable = false;
}
