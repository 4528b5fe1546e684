// Benchmarks the local MiniLM embedder the way `engram bench` will: load time, RSS, throughput on
// 32 short developer prompts, single-sentence latency and the sanity pair. Prints one JSON object.
// Run with `bash test/bench/embedder-bench.sh [--threads N] [--batch N] [--rounds N]`.
import { measureEmbedder, OnnxMiniLmEmbedder } from '@engram/ai';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

async function main(): Promise<void> {
  const intraOpNumThreads = flag('--threads', 1);
  const maxBatchSize = flag('--batch', 1);
  const rounds = flag('--rounds', 10);
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;
  const start = performance.now();
  const embedder = await OnnxMiniLmEmbedder.load({
    modelsDir: process.env.ENGRAM_MODELS_DIR || undefined,
    intraOpNumThreads,
    maxBatchSize,
  });
  const loadMs = performance.now() - start;
  const measurement = await measureEmbedder(embedder, { rounds });
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  await embedder.dispose();
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify(
      {
        ...measurement,
        sentencesPerSecond: Math.round(measurement.sentencesPerSecond),
        singleLatencyMs: {
          p50: round(measurement.singleLatencyMs.p50),
          p95: round(measurement.singleLatencyMs.p95),
        },
        sanity: {
          related: round(measurement.sanity.related),
          unrelated: round(measurement.sanity.unrelated),
        },
        settings: { intraOpNumThreads, maxBatchSize, rounds },
        loadMs: Math.round(loadMs),
        rssMb: { beforeLoad: Math.round(rssBeforeMb), afterBench: Math.round(rssMb) },
      },
      null,
      2,
    ),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
