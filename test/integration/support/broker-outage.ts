import { Kafka, logLevel } from 'kafkajs';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { InfraEndpoints } from './infra-endpoints';

const run = promisify(execFile);
const INFRA_SH = resolve(__dirname, '../../../deploy/local/infra.sh');
/** A watchdog undoes an outage the test could not undo itself (its worker was killed). */
const WATCHDOG_AFTER_S = 180;

/**
 * Takes the shared Kafka broker away and brings it back, for outage tests. Integration files run
 * one after another, so the outage touches no other file, provided `restore` always runs.
 */
export interface BrokerOutage {
  /** Where the broker runs and how it is controlled, for the test's log. */
  readonly description: string;
  /** A hung broker: frozen (SIGSTOP, docker pause); connections stay open, nothing answers. */
  hang(): Promise<void>;
  /** A stopped broker: its process ends (connections refused); its data stays for the restart. */
  stop(): Promise<void>;
  /** Undoes either outage (a no-op when there is none) and waits until the broker serves again. */
  restore(): Promise<void>;
}

interface BrokerControls {
  description: string;
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  halt(): Promise<void>;
  start(): Promise<void>;
  /** A detached shell command that undoes `outage` on its own after WATCHDOG_AFTER_S. */
  watchdogFor(outage: 'hung' | 'stopped'): string;
}

/**
 * The broker of this integration run: a deploy/local process (local processes, and external
 * servers when they are infra.sh's, as on this project's machines) or the testcontainers
 * container. Throws, never skips, when the broker cannot be controlled.
 */
export function brokerOutage(infra: InfraEndpoints): BrokerOutage {
  const controls =
    infra.mode === 'testcontainers' ? containerControls(infra) : localControls(infra);
  let state: 'up' | 'hung' | 'stopped' = 'up';
  let watchdog: number | undefined;

  const arm = (outage: 'hung' | 'stopped') => {
    const child = spawn('sh', ['-c', controls.watchdogFor(outage)], {
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    watchdog = child.pid;
  };
  const disarm = () => {
    if (watchdog === undefined) return;
    try {
      process.kill(-watchdog, 'SIGKILL'); // its own process group: the sleep goes too
    } catch {
      // already gone
    }
    watchdog = undefined;
  };

  return {
    description: controls.description,
    async hang() {
      if (state !== 'up') throw new Error(`the broker is already ${state}`);
      arm('hung');
      await controls.freeze();
      state = 'hung';
    },
    async stop() {
      if (state !== 'up') throw new Error(`the broker is already ${state}`);
      arm('stopped');
      state = 'stopped';
      await controls.halt();
    },
    async restore() {
      if (state === 'hung') await controls.thaw();
      if (state === 'stopped') await controls.start();
      state = 'up';
      disarm();
      await waitUntilServing(infra.kafkaBrokers);
    },
  };
}

/** infra.sh's Kafka process; it must be the configured broker. */
function localControls(infra: InfraEndpoints): BrokerControls {
  const infraHome = process.env.ENGRAM_INFRA_HOME ?? join(homedir(), '.cache', 'engram', 'infra');
  const pidFile = join(infraHome, 'run', 'kafka.pid');
  const kafkaPort = process.env.ENGRAM_KAFKA_PORT ?? '9092';
  const broker = `127.0.0.1:${kafkaPort}`;
  if (infra.kafkaBrokers.length !== 1 || infra.kafkaBrokers[0] !== broker) {
    throw new Error(
      `the configured brokers ${infra.kafkaBrokers.join(',')} are not deploy/local's Kafka (${broker}): cannot take them away`,
    );
  }
  const pid = () => {
    const text = readFileSync(pidFile, 'utf8').trim();
    const cmdline = readFileSync(`/proc/${text}/cmdline`, 'utf8');
    if (!cmdline.includes('kafka.Kafka')) throw new Error(`${pidFile}: ${text} is not Kafka`);
    return Number(text);
  };
  pid(); // fails now, before any test runs, when there is no such broker
  const signal = (name: NodeJS.Signals) => {
    process.kill(pid(), name);
    return Promise.resolve();
  };
  const infraSh = (...args: string[]) => run('bash', [INFRA_SH, ...args], { timeout: 330_000 });
  return {
    description: `deploy/local Kafka at ${broker} (pid file ${pidFile})`,
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    halt: async () => void (await infraSh('down', 'kafka')),
    start: async () => void (await infraSh('up', 'kafka')),
    watchdogFor: (outage) =>
      outage === 'hung'
        ? `sleep ${WATCHDOG_AFTER_S}; kill -CONT ${pid()}`
        : `sleep ${WATCHDOG_AFTER_S}; exec bash '${INFRA_SH}' up kafka >/dev/null 2>&1`,
  };
}

/** The testcontainers Kafka, by the id the global setup provides. */
function containerControls(infra: InfraEndpoints): BrokerControls {
  const id = infra.kafkaContainerId;
  if (!id) throw new Error('the global setup provided no Kafka container id');
  const docker = async (...args: string[]) =>
    void (await run('docker', args, { timeout: 120_000 }));
  return {
    description: `Kafka container ${id.slice(0, 12)}`,
    freeze: () => docker('pause', id),
    thaw: () => docker('unpause', id),
    halt: () => docker('stop', id),
    start: () => docker('start', id),
    watchdogFor: (outage) =>
      `sleep ${WATCHDOG_AFTER_S}; docker ${outage === 'hung' ? 'unpause' : 'start'} ${id}`,
  };
}

/**
 * Until the broker answers a metadata request listing itself: in KRaft only an unfenced broker
 * is listed, one that leads partitions and takes writes again.
 */
export async function waitUntilServing(brokers: string[], timeoutMs = 300_000): Promise<void> {
  // Quiet and quick: failed probes are expected until the broker is back.
  const kafka = new Kafka({
    brokers,
    clientId: 'outage-probe',
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 3_000,
    retry: { retries: 0 },
  });
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      const { brokers: serving } = await admin.describeCluster();
      if (serving.length > 0) return;
    } catch (error) {
      lastError = error;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`Kafka not serving again within ${timeoutMs} ms`, { cause: lastError });
}
