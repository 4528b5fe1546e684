import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { deadLetterReason } from './dead-letter-reason';
import { promClient } from './prom-client';
import { Readiness } from './readiness';

/** How far a consumer group is behind the end of one partition, in records. */
export interface LagReading {
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

/** Reads the lag of the partitions a consumer owns; called at each scrape. */
export type LagSource = () => LagReading[];

/** Metric names (README "Metrics and health"). Labels stay bounded: no tenant, session or text. */
export const METRIC_NAMES = {
  eventsConsumed: 'engram_events_consumed_total',
  deadLetters: 'engram_dead_letters_total',
  batchDuration: 'engram_stage_batch_duration_seconds',
  consumerLag: 'engram_consumer_lag',
  recallDuration: 'engram_recall_duration_seconds',
} as const;

type StreamLabels = 'group' | 'topic';

/**
 * One Prometheus registry and the metrics a stream-processing operator needs: events consumed and
 * dead letters written per consumer group and topic, stage batch latency, consumer lag per
 * partition and gRPC recall latency; plus the process's readiness checks. The processors of
 * libs/kafka and libs/embedded record into `processMetrics()`; tests make their own.
 */
export class EngramMetrics {
  readonly registry: Registry;
  readonly readiness = new Readiness();
  private readonly consumed: Counter<StreamLabels>;
  private readonly deadLetters: Counter<StreamLabels | 'reason'>;
  private readonly batchSeconds: Histogram<StreamLabels>;
  private readonly recallSeconds: Histogram<'outcome'>;
  private readonly lagSources = new Set<LagSource>();
  /** Lag readings pushed by Kafka consumers (as of each partition's last batch), by partition. */
  private readonly pushedLag = new Map<string, LagReading>();
  private processMetricsOn = false;

  constructor() {
    const prom = promClient();
    this.registry = new prom.Registry();
    const registers = [this.registry];
    this.consumed = new prom.Counter({
      name: METRIC_NAMES.eventsConsumed,
      help: 'Events a stage processed and committed, per consumer group and topic',
      labelNames: ['group', 'topic'],
      registers,
    });
    this.deadLetters = new prom.Counter({
      name: METRIC_NAMES.deadLetters,
      help: 'Records written to <topic>.dlq, per consumer group, source topic and reason kind',
      labelNames: ['group', 'topic', 'reason'],
      registers,
    });
    this.batchSeconds = new prom.Histogram({
      name: METRIC_NAMES.batchDuration,
      help: 'Time to process and commit one batch of a partition (retries included), per stage',
      labelNames: ['group', 'topic'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.recallSeconds = new prom.Histogram({
      name: METRIC_NAMES.recallDuration,
      help: 'gRPC Recall call latency, by outcome (ok, error)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.createLagGauge(registers);
  }

  /** Counts `count` committed events of `topic` consumed by `group`. */
  recordConsumed(group: string, topic: string, count: number): void {
    if (count > 0) this.consumed.inc({ group, topic }, count);
  }

  /** Counts one committed dead letter of `topic`, labelled with its reason kind. */
  recordDeadLetter(group: string, topic: string, error: unknown): void {
    this.deadLetters.inc({ group, topic, reason: deadLetterReason(error) });
  }

  /** Starts timing a batch of `topic` in `group`'s stage; call the result when it is done. */
  startBatch(group: string, topic: string): () => void {
    const end = this.batchSeconds.startTimer({ group, topic });
    return () => void end();
  }

  /** A consumer's lag on one partition, as of its latest batch (Kafka: the batch's offsetLag). */
  recordLag(reading: LagReading): void {
    this.pushedLag.set(`${reading.group}\u0000${reading.topic}\u0000${reading.partition}`, reading);
  }

  /** Adds a source read at every scrape (the embedded log); returns the function removing it. */
  watchLag(source: LagSource): () => void {
    this.lagSources.add(source);
    return () => this.lagSources.delete(source);
  }

  /** Times one recall (`outcome` ok or error) and passes its result or error on. */
  async timeRecall<T>(work: () => Promise<T>): Promise<T> {
    const end = this.recallSeconds.startTimer();
    try {
      const result = await work();
      end({ outcome: 'ok' });
      return result;
    } catch (error) {
      end({ outcome: 'error' });
      throw error;
    }
  }

  /** Adds prom-client's default process metrics (CPU, memory, event loop, GC) once. */
  collectProcessMetrics(): void {
    if (this.processMetricsOn) return;
    promClient().collectDefaultMetrics({ register: this.registry });
    this.processMetricsOn = true;
  }

  private createLagGauge(registers: Registry[]): Gauge<StreamLabels | 'partition'> {
    const readings = () => [...this.pushedLag.values(), ...this.sourcedLag()];
    return new (promClient().Gauge)({
      name: METRIC_NAMES.consumerLag,
      help: 'Records between a consumer group and the end of a partition',
      labelNames: ['group', 'topic', 'partition'],
      registers,
      collect() {
        this.reset();
        for (const { group, topic, partition, lag } of readings()) {
          this.set({ group, topic, partition: String(partition) }, lag);
        }
      },
    });
  }

  private sourcedLag(): LagReading[] {
    return [...this.lagSources].flatMap((source) => {
      try {
        return source();
      } catch {
        return []; // a source closing while scraped: its partitions are left out of this scrape
      }
    });
  }
}

let processWide: EngramMetrics | undefined;

/** The process's metrics: one registry per process, created on first use. */
export function processMetrics(): EngramMetrics {
  processWide ??= new EngramMetrics();
  return processWide;
}
