import { KafkaEventLog } from '@engram/kafka';
import { describeEventLogContract } from '../../libs/core/src/ports/testing/event-log.contract';
import { testKafka, testRegistry } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

// The same contract suite the embedded SQLite log passes in the unit tier, on real Kafka + registry.
describeEventLogContract('Kafka + Schema Registry', async () => {
  const log = new KafkaEventLog(testKafka(), testRegistry());
  await log.connect();
  return {
    log,
    topicName: (prefix: string) => uniqueName(`it.${prefix}`),
    close: () => log.disconnect(),
  };
});
