import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStreamPlatformContract } from '../../core/src/ports/testing/stream-platform.contract';
import { EmbeddedStreamPlatform } from './embedded-stream-platform';
import { SqliteEventLog } from './sqlite-event-log';

describeStreamPlatformContract('embedded SQLite log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-platform-contract-'));
  const log = SqliteEventLog.open({ dataDir: dir });
  let n = 0;
  return Promise.resolve({
    platform: new EmbeddedStreamPlatform(log),
    uniqueName: (prefix: string) => `${prefix}-${n++}`,
    close: () => {
      log.close();
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});
