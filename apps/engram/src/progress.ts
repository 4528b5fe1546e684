import { SingleBar } from 'cli-progress';

/** Progress of one long piece of work (replay, import, reindex, bootstrap). */
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
  /** Where the bar is drawn; stderr so that stdout stays data (`--json`). */
  stream?: NodeJS.WriteStream;
  /** Forces the bar off (e.g. `--no-progress`, `--json` runs in scripts). */
  enabled?: boolean;
}

/**
 * A progress bar on stderr when it is a terminal, and nothing otherwise: CI logs and scripts
 * that capture stderr get no carriage-return noise.
 */
export function progressBar(label: string, options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.enabled === false || !stream.isTTY) return silentProgress();
  const bar = new SingleBar({
    stream,
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${options.unit} | {eta_formatted} left`,
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 50,
  });
  bar.start(0, 0);
  return {
    total: (n) => bar.setTotal(n),
    advance: (n = 1) => bar.increment(n),
    stop: () => bar.stop(),
  };
}

function silentProgress(): Progress {
  return { total: () => undefined, advance: () => undefined, stop: () => undefined };
}
