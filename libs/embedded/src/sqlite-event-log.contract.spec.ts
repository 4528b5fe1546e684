import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventLogContract } from '../../core/src/ports/testing/event-log.contract';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteEventLogAdapter } from './sqlite-event-log.adapter';

describeEventLogContract('embedded SQLite log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-contract-'));
  const log = SqliteEventLog.open({ dataDir: dir });
  let n = 0;
  return Promise.resolve({
    log: new SqliteEventLogAdapter(log),
    topicName: (prefix: string) => `${prefix}-${n++}`,
    close: () => {
      log.close();
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});
