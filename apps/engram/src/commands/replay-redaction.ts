import type { ReplayEvent } from '@engram/contracts';
import { redactEvent, redactRawLine, redactSecrets } from '@engram/core';

/** A rejected line as replay and import report it (ReplayLineError, TranscriptLineError). */
interface LineError {
  message: string;
  raw: string;
  detail: string;
}

/**
 * SPEC §11 at `engram replay` / `engram import`'s entry: the recorded events were written by
 * any producer, redacted or not, so each event is redacted before it is published (the input
 * topics, and from there every store and changelog), and a rejected line before it is
 * dead-lettered (`<topic>.dlq` keeps the raw line) or reported.
 */
export function redactReplayItem<T extends ReplayEvent | LineError>(item: T): T {
  if ('event' in item) return { ...item, event: redactEvent(item.event) };
  // The same error (class, line, field) with its raw line and message redacted.
  const redacted = Object.create(Object.getPrototypeOf(item) as object) as T & LineError;
  Object.defineProperties(redacted, Object.getOwnPropertyDescriptors(item));
  Object.defineProperty(redacted, 'raw', { value: redactRawLine(item.raw) });
  Object.defineProperty(redacted, 'detail', { value: redactSecrets(item.detail).text });
  Object.defineProperty(redacted, 'message', { value: redactSecrets(item.message).text });
  return redacted;
}
