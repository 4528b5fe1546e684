import { describeStreamPlatformContract } from '../../libs/core/src/ports/testing/stream-platform.contract';
import { testPlatform } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

// The same contract suite the embedded platform passes in the unit tier, on real Kafka + registry.
describeStreamPlatformContract('Kafka + Schema Registry', async () => {
  const platform = await testPlatform();
  return {
    platform,
    uniqueName: (prefix: string) => uniqueName(`it.${prefix}`),
    close: () => platform.close(),
  };
});
