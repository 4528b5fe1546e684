import type { Message } from 'kafkajs';

/**
 * Splits messages into sends of at most ~512 KB: a send becomes one record batch per partition,
 * and the broker refuses batches over `message.max.bytes` (1 MB by default) — a big batch of
 * state changelog records would otherwise fail the transaction again and again.
 */
export function chunkBySize(messages: Message[], maxBytes = 512 * 1024): Message[][] {
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let size = 0;
  for (const message of messages) {
    const bytes = byteLength(message.value) + byteLength(message.key) + 64;
    if (current.length > 0 && size + bytes > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function byteLength(value: Message['value'] | Message['key']): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}
