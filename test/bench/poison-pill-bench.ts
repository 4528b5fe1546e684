// Times every core function that runs a regular expression over event text on adversarial
// shapes (issue #19, finding 2: one 5 MB errorMessage froze the process), at n and 4n
// characters: a linear function takes about 4× as long, a quadratic one 16×. Prints one line per
// function × shape, slowest first, and the 5 MB figure of each function's worst shape.
// Run with `bash test/bench/poison-pill-bench.sh [n]` (default n = 250,000).
import {
  ADVERSARIAL_SHAPES,
  EVENT_TEXT_FUNCTIONS as FUNCTIONS,
} from '../../libs/core/src/testing/adversarial-text';

function time(fn: (text: string) => unknown, text: string): number {
  const start = performance.now();
  fn(text);
  return performance.now() - start;
}

const n = Number(process.argv[2] ?? 250_000);
const FIVE_MB = 5 * 1024 * 1024;
const rows: { fn: string; shape: string; small: number; large: number; ratio: number }[] = [];
for (const [fn, run] of Object.entries(FUNCTIONS)) {
  for (const [shape, make] of Object.entries(ADVERSARIAL_SHAPES)) {
    const small = time(run, make(n));
    const large = time(run, make(4 * n));
    rows.push({ fn, shape, small, large, ratio: large / Math.max(small, 0.5) });
  }
}
rows.sort((a, b) => b.large - a.large);
for (const r of rows) {
  console.log(
    `${r.fn.padEnd(22)} ${r.shape.padEnd(10)} ${n}: ${r.small.toFixed(1).padStart(8)} ms  ` +
      `${4 * n}: ${r.large.toFixed(1).padStart(8)} ms  ×${r.ratio.toFixed(1)}`,
  );
}
for (const fn of Object.keys(FUNCTIONS)) {
  const worst = rows.find((r) => r.fn === fn)!;
  const ms = time(FUNCTIONS[fn], ADVERSARIAL_SHAPES[worst.shape](FIVE_MB));
  console.log(`5 MB ${fn} (${worst.shape}): ${ms.toFixed(0)} ms`);
}
