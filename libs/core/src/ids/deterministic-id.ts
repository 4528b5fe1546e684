import { createHash } from 'node:crypto';

/**
 * Namespace of Engram's uuid v5 ids (SPEC §3: episodeId = uuid v5 of sessionId + promptId; §6:
 * memory ids). Every deterministic id in Engram is `uuidV5(<natural key>)` in this namespace, so
 * a replayed write is an idempotent upsert.
 */
export const ENGRAM_ID_NAMESPACE = '6d1f0a8e-3c55-5b1e-9a57-0e4f1f5b2c10';

const NAMESPACE_BYTES = Buffer.from(ENGRAM_ID_NAMESPACE.replace(/-/g, ''), 'hex');

/**
 * RFC 4122 version-5 uuid of `name` in Engram's namespace (the `uuid` package's v5, without
 * re-parsing the namespace on every call: id generation was a tenth of the segmenter's time).
 */
export function uuidV5(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE_BYTES).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** uuid v5 of several key parts joined unambiguously (parts may contain any character). */
export function idOf(...parts: readonly (string | number)[]): string {
  return uuidV5(parts.map((part) => `${String(part).length}:${String(part)}`).join('|'));
}
