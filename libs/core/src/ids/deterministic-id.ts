import { hash as oneShotHash } from 'node:crypto';

/**
 * Namespace of Engram's uuid v5 ids (SPEC §3: episodeId = uuid v5 of sessionId + promptId; §6:
 * memory ids). Every deterministic id in Engram is `uuidV5(<natural key>)` in this namespace, so
 * a replayed write is an idempotent upsert.
 */
export const ENGRAM_ID_NAMESPACE = '6d1f0a8e-3c55-5b1e-9a57-0e4f1f5b2c10';

const NAMESPACE_BYTES = Buffer.from(ENGRAM_ID_NAMESPACE.replace(/-/g, ''), 'hex');

/**
 * RFC 4122 version-5 uuid of `name` in Engram's namespace (the `uuid` package's v5, without
 * re-parsing the namespace on every call, and with the one-shot `crypto.hash` instead of a Hash
 * object per id: id generation was a sixth of the segmenter's time, object creation most of it).
 */
export function uuidV5(name: string): string {
  const input = Buffer.allocUnsafe(NAMESPACE_BYTES.length + Buffer.byteLength(name, 'utf8'));
  NAMESPACE_BYTES.copy(input, 0);
  input.write(name, NAMESPACE_BYTES.length, 'utf8');
  const hash = oneShotHash('sha1', input, 'buffer');
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** uuid v5 of several key parts joined unambiguously (parts may contain any character). */
export function idOf(...parts: readonly (string | number)[]): string {
  return uuidV5(parts.map((part) => `${String(part).length}:${String(part)}`).join('|'));
}
