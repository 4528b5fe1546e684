import { MisconfigurationError } from '@engram/core';
import type { Database } from 'better-sqlite3';

/** The schema version this code writes (`PRAGMA user_version`). */
export const EVENT_LOG_SCHEMA_VERSION = 1;

/**
 * The event log's tables. Offsets are dense per partition because `partitions.next_offset` is
 * read and advanced inside the appending transaction (writers are serialised by SQLite's write
 * lock, across processes too). `compacted_keys` points at the latest record of every live key of
 * a compacted topic, so restoring a changelog reads one row per key instead of the whole log.
 */
const SCHEMA_V1 = `
CREATE TABLE topics (
  id          INTEGER PRIMARY KEY,
  name        TEXT    NOT NULL UNIQUE,
  partitions  INTEGER NOT NULL CHECK (partitions > 0),
  compacted   INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL
);
CREATE TABLE partitions (
  topic_id    INTEGER NOT NULL REFERENCES topics (id),
  partition   INTEGER NOT NULL,
  next_offset INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (topic_id, partition)
) WITHOUT ROWID;
CREATE TABLE records (
  topic_id    INTEGER NOT NULL,
  partition   INTEGER NOT NULL,
  offset      INTEGER NOT NULL,
  key         TEXT,
  value       BLOB,
  headers     TEXT,
  timestamp   INTEGER NOT NULL,
  PRIMARY KEY (topic_id, partition, offset)
);
CREATE TABLE compacted_keys (
  topic_id    INTEGER NOT NULL,
  partition   INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  offset      INTEGER NOT NULL,
  PRIMARY KEY (topic_id, partition, key)
) WITHOUT ROWID;
CREATE TABLE consumer_offsets (
  group_id     TEXT    NOT NULL,
  topic_id     INTEGER NOT NULL,
  partition    INTEGER NOT NULL,
  offset       INTEGER NOT NULL,
  committed_at INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic_id, partition)
) WITHOUT ROWID;
`;

/**
 * Brings a database file to the current schema, in one transaction (a second process opening the
 * same file at the same time waits on the write lock, then sees the schema in place).
 */
export function migrate(db: Database): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > EVENT_LOG_SCHEMA_VERSION) {
      throw new MisconfigurationError(
        `${db.name} has event log schema ${version}, newer than this Engram understands ` +
          `(${EVENT_LOG_SCHEMA_VERSION}); upgrade Engram or point --data-dir elsewhere`,
      );
    }
    if (version < 1) {
      db.exec(SCHEMA_V1);
      db.pragma(`user_version = ${EVENT_LOG_SCHEMA_VERSION}`);
    }
  }).immediate();
}
