import {
  SqliteEventLog,
  SqliteFrictionSource,
  SqliteRetrievalStore,
  sqliteStoreWriter,
} from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFrictionSourceContract } from '../../../../libs/core/src/ports/testing/friction-source.contract';
import { indexFrictionData } from './friction-distributed-replay';
import { frictionTopics } from './friction-report.command';

// The FrictionSource contract on the embedded source: the events in the SQLite event log (as
// `engram replay` writes them), the turns and memories through the same RetrievalIndexer as
// Elasticsearch. The distributed source runs it in test/integration/friction-distributed.test.ts.
describeFrictionSourceContract('embedded SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-contract-'));
  const topics = frictionTopics('');
  let n = 0;
  return Promise.resolve({
    tenant: (prefix: string) => `${prefix}-${n++}`,
    replay: async (data) => {
      const log = SqliteEventLog.open({ dataDir: dir });
      const append = (topic: string, events: readonly { sessionId: string }[]) => {
        log.ensureTopic(topic, 2);
        log.append(
          topic,
          events.map((event) => ({ key: event.sessionId, value: JSON.stringify(event) })),
        );
      };
      append(topics.prompts, data.prompts);
      append(topics.toolCalls, data.toolCalls);
      append(topics.lifecycle, data.sessionEnds);
      log.close();
      const store = SqliteRetrievalStore.open({ dataDir: dir });
      try {
        await indexFrictionData(data, sqliteStoreWriter(store), (updates) =>
          store.writeAccess(updates),
        );
      } finally {
        store.close();
      }
      return SqliteFrictionSource.open({ dataDir: dir, topics });
    },
    close: () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});
