import type { Database, Statement } from 'better-sqlite3';

/** Prepared statements kept per store; past it the cache starts again. */
const MAX_STATEMENTS = 200;

/** A prepared statement per SQL text, kept (filters give a few shapes of SQL per tier). */
export class StatementCache {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  get(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  clear(): void {
    this.statements.clear();
  }
}
