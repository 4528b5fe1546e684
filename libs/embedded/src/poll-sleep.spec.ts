import { describe, expect, it } from 'vitest';
import { PollSleep } from './poll-sleep';

describe('PollSleep', () => {
  it('should end a pause after its time, or at once when woken', async () => {
    const pause = new PollSleep();
    let started = Date.now();
    await pause.sleep(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);

    started = Date.now();
    const long = pause.sleep(10_000);
    const other = pause.sleep(10_000);
    pause.wakeAll();
    await Promise.all([long, other]);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Woken pauses are gone: waking again touches nothing, a new pause still waits.
    pause.wakeAll();
    started = Date.now();
    await pause.sleep(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });
});
