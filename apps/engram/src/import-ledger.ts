import BetterSqlite3, { type Database } from 'better-sqlite3';
import { preparePrivateDatabase } from '@engram/embedded';
import { join } from 'node:path';

/**
 * The event ids `engram import` has published from this data directory (`imports.db`), so that
 * importing the same transcripts again publishes nothing. The ids are deterministic, so a
 * duplicate would be recognisable downstream — but not every stage ignores a whole session
 * replayed after its end (the observer promotes on the second SessionEnded), so the import does
 * not rely on it. Ids are recorded after the log accepted them: a crash in between can only
 * cause duplicates on the next import, never a loss.
 */
export class ImportLedger {
  private constructor(private readonly db: Database) {}

  static open(dataDir: string): ImportLedger {
    preparePrivateDatabase(dataDir, join(dataDir, 'imports.db'));
    const db = new BetterSqlite3(join(dataDir, 'imports.db'));
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE IF NOT EXISTS imported_events (' +
        'event_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, imported_at INTEGER NOT NULL' +
        ') WITHOUT ROWID',
    );
    return new ImportLedger(db);
  }

  /** The ids among `eventIds` published before. */
  known(eventIds: readonly string[]): Set<string> {
    const select = this.db.prepare('SELECT 1 FROM imported_events WHERE event_id = ?').pluck();
    return new Set(eventIds.filter((id) => select.get(id) !== undefined));
  }

  record(events: readonly { eventId: string; sessionId: string }[], now = Date.now()): void {
    const insert = this.db.prepare(
      'INSERT OR IGNORE INTO imported_events (event_id, session_id, imported_at) VALUES (?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const event of events) insert.run(event.eventId, event.sessionId, now);
    })();
  }

  close(): void {
    this.db.close();
  }
}
