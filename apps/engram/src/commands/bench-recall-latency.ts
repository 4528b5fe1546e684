import { percentile as nearestRank } from '@engram/ai';

// Latency figures of the recall benches: percentiles of timed calls, in milliseconds.

/** The p-th percentile (nearest rank), in ms with two decimals. */
export function percentile(values: readonly number[], p: number): number {
  return Number(nearestRank(values, p / 100).toFixed(2));
}

/** Milliseconds: wall clock, and the process's CPU time (what an idle machine would see). */
export interface Latency {
  p50: number;
  p95: number;
  p99: number;
  cpuP50: number;
  cpuP99: number;
}

export function latencyOf(wall: number[], cpu: number[]): Latency {
  return {
    p50: percentile(wall, 50),
    p95: percentile(wall, 95),
    p99: percentile(wall, 99),
    cpuP50: percentile(cpu, 50),
    cpuP99: percentile(cpu, 99),
  };
}

/**
 * Runs `work` once per item, timing each call in wall-clock and CPU milliseconds, after running it
 * untimed on `warmup` (the JIT, and the collection of what building the indexes left behind).
 */
export async function timed<T, R>(
  items: readonly T[],
  work: (item: T) => Promise<R>,
  warmup: readonly T[] = [],
) {
  for (const item of warmup) await work(item);
  const wall: number[] = [];
  const cpu: number[] = [];
  const results: R[] = [];
  for (const item of items) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    results.push(await work(item));
    const used = process.cpuUsage(cpuStarted);
    cpu.push((used.user + used.system) / 1000);
    wall.push(performance.now() - started);
  }
  return { latency: latencyOf(wall, cpu), results };
}
