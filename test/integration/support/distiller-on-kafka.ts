import { ensureDistillerTopics } from '../../../apps/distiller/src/distiller-topics';
import {
  startDistiller,
  type DistillerOptions,
  type RunningDistiller,
} from '../../../apps/distiller/src/distiller.topology';
import type { DistillerTopics } from '../../../apps/distiller/src/distiller.stage';
import { testPlatform, withTestPlatform } from './kafka-fixtures';

/**
 * The distiller on a Kafka platform of its own (as `engram start --distributed` runs it on the
 * process's shared one); `stop` drains and commits, then closes the platform.
 */
export async function startDistillerOnKafka(
  options: Omit<DistillerOptions, 'platform'>,
): Promise<RunningDistiller> {
  const platform = await testPlatform();
  try {
    const running = await startDistiller({ ...options, platform });
    return {
      ...running,
      async stop() {
        await running.stop();
        await platform.close();
      },
    };
  } catch (error) {
    await platform.close();
    throw error;
  }
}

/** Creates the distiller's topics on Kafka (inputs with `partitions`, the rest laid out from them). */
export function ensureDistillerTopicsOnKafka(
  topics: DistillerTopics,
  partitions: number,
): Promise<number> {
  return withTestPlatform((platform) => ensureDistillerTopics(platform, topics, partitions));
}
