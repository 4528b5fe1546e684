import { SingleBar } from 'cli-progress';

/** Progress of one long piece of work (replay, import, reindex, bootstrap, benchmarks). */
export interface Progress {
  /** Sets the total once it is known (or changes it). */
  total(n: number): void;
  /** Adds `n` finished units. */
  advance(n?: number): void;
  /** Ends the bar; the caller prints its own summary afterwards. */
  stop(): void;
}

export interface ProgressOptions {
  /** What is counted ("events", "commits", "documents"…). */
  unit: string;
  /** Where progress goes; stderr so that stdout stays data (`--json`). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Forces progress off (e.g. `--no-progress`, `--json` runs in scripts). */
  enabled?: boolean;
  /** Plain lines (not a terminal): at most one per this many ms (default 5 s). */
  lineIntervalMs?: number;
  /** The clock of the plain lines (tests). */
  now?: () => number;
}

/**
 * Progress on stderr: a bar with the rate and the time left on a terminal; on anything else (CI
 * logs, a file) a plain line now and then — `label: 1200/5000 events, 310/s, about 12 s left` —
 * and, after those, one at the end: a long run in a log is not silent, a short one writes
 * nothing, and there is no carriage-return noise.
 * Nothing at all when disabled (`--json`).
 */
export function progressBar(label: string, options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.enabled === false) return silentProgress();
  return stream.isTTY
    ? terminalBar(label, options.unit, stream)
    : plainLines(label, options, stream);
}

function terminalBar(label: string, unit: string, stream: NodeJS.WritableStream): Progress {
  const bar = new SingleBar({
    stream: stream,
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate}/s | {eta_formatted} left`,
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 50,
  });
  const started = Date.now();
  let done = 0;
  const rate = () => ({ rate: Math.round(done / Math.max((Date.now() - started) / 1000, 0.001)) });
  bar.start(0, 0, rate());
  return {
    total: (n) => bar.setTotal(n),
    advance: (n = 1) => {
      done += n;
      bar.increment(n, rate());
    },
    stop: () => bar.stop(),
  };
}

function plainLines(
  label: string,
  options: ProgressOptions,
  stream: NodeJS.WritableStream,
): Progress {
  const now = options.now ?? Date.now;
  const interval = options.lineIntervalMs ?? 5_000;
  const started = now();
  let lastLine = started;
  let lines = 0;
  let total = 0;
  let done = 0;
  const line = () => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    const rate = done / seconds;
    const of = total > 0 ? `${done}/${total}` : `${done}`;
    const left =
      total > done && rate > 0 ? `, about ${Math.ceil((total - done) / rate)} s left` : '';
    stream.write(`${label}: ${of} ${options.unit}, ${Math.round(rate)}/s${left}\n`);
    lastLine = now();
    lines += 1;
  };
  return {
    total: (n) => {
      total = n;
    },
    advance: (n = 1) => {
      done += n;
      if (now() - lastLine >= interval) line();
    },
    // A closing line only after a run long enough to have written others: short runs stay quiet.
    stop: () => {
      if (lines > 0) line();
    },
  };
}

function silentProgress(): Progress {
  return { total: () => undefined, advance: () => undefined, stop: () => undefined };
}
