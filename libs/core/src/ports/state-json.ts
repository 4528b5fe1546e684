import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';

/**
 * A stage's state records (changelog values, internal topics) are JSON; above this size they are
 * gzipped: a long session's state can pass the broker's 1 MB record limit as JSON and compresses
 * several times over. Smaller ones stay JSON, readable with any console consumer or sqlite3.
 */
export const COMPRESS_STATE_ABOVE_BYTES = 64 * 1024;
/** JSON never starts with this byte; gzip always does. */
const GZIP_MAGIC = 0x1f;

export function encodeStateJson(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  if (json.length <= COMPRESS_STATE_ABOVE_BYTES) return json;
  return gzipSync(json, { level: zlib.Z_BEST_SPEED });
}

export function decodeStateJson<T>(value: Buffer): T {
  const json = value[0] === GZIP_MAGIC ? gunzipSync(value) : value;
  return JSON.parse(json.toString('utf8')) as T;
}
