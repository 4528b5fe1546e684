import { DownstreamUnavailableError, errorMessage } from '@engram/core';
import BetterSqlite3 from 'better-sqlite3';

const OUTAGE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|NOMEM|PROTOCOL|CANTOPEN)/;

/**
 * SQLite failures that are outages (another process holds the write lock past the busy timeout,
 * the disk is full or failing) become DownstreamUnavailableError, so consumers pause and retry
 * for as long as it takes instead of dead-lettering good records. Anything else is returned as is
 * (a non-Error wrapped in one).
 */
export function classifyStorageError(error: unknown): Error {
  if (error instanceof BetterSqlite3.SqliteError && OUTAGE_CODES.test(error.code)) {
    return new DownstreamUnavailableError(
      `event log storage: ${error.message}`,
      { code: error.code },
      { cause: error },
    );
  }
  return error instanceof Error ? error : new Error(errorMessage(error));
}
