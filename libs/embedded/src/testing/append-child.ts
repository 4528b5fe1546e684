// A child process for the durability test: appends records one transaction at a time and prints
// "acked <i>" after each append returned (= committed and fsynced), until it is killed.
import { SqliteEventLog } from '../sqlite-event-log';

const [dataDir, topic] = process.argv.slice(2);
const log = SqliteEventLog.open({ dataDir });
log.ensureTopic(topic, 2);
for (let i = 0; ; i++) {
  const records = Array.from({ length: 1 + (i % 3) }, (_, j) => ({
    key: `key-${i % 7}`,
    value: JSON.stringify({ i, j }),
  }));
  log.append(topic, records);
  process.stdout.write(`acked ${i}\n`);
}
