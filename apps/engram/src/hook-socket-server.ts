import { parseConfig, type EngramConfig } from '@engram/config';
import { errorMessage } from '@engram/core';
import { chmodSync, existsSync, lstatSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import {
  DEFAULT_CONTEXT_BUDGET_MS,
  DEFAULT_HOOK_BUDGET_MS,
  distributedHookPublisher,
  embeddedHookPublisher,
  embeddedPendingReviews,
  GIT_LOG_TIMEOUT_MS,
  GIT_LS_FILES_TIMEOUT_MS,
  grpcHookMemory,
  hookMemoryOn,
  hookRunFor,
  runHook,
  type ContextAnswers,
  type HookMemory,
  type HookOutcome,
  type HookPublisher,
} from './commands/hook.command';
import {
  hookSocketPath,
  HOOK_SOCKET_VERSION,
  lineReader,
  type HookSocketReply,
  type HookSocketRequest,
} from './hook-socket-protocol';

// `engram start`'s end of the hook socket (protocol: hook-socket-protocol.ts). A hook's event
// is handled here by the hook command's own functions (hookRunFor + runHook: the same mapping,
// session state under the same lock, spool and context as a hook process), with a publisher
// and a recall stack that stay open, so a hook costs a process start and one round trip.

/** The warm publisher's wait for the log's write lock: the direct hook's (budget / 2). */
const HOOK_BUSY_TIMEOUT_MS = Math.floor(DEFAULT_HOOK_BUDGET_MS / 2);
/** Past the hook's own budgets, what the hook allows for a busy event loop before going direct. */
const ANSWER_SLACK_MS = 1_000;
/** A connection that neither asks nor goes on within this long is closed. */
const IDLE_CONNECTION_MS = 10_000;
/** How long `engram start` waits to see whether a hook.sock already there is served. */
const PROBE_MS = 500;

export interface HookSocketService {
  mode: 'embedded' | 'distributed';
  dataDir: string;
  config: EngramConfig;
  /** Stays open (closed by the server's stop). */
  publisher: HookPublisher;
  openMemory(deadline: number): Promise<HookMemory | null>;
  /** Where the server says what it does (start-up, refusals of a whole socket). */
  log(line: string): void;
}

export interface HookSocketServer {
  path: string;
  /** Hooks this server took (said `go` to) so far. */
  readonly served: number;
  /** Stops taking hooks, lets the ones taken finish, removes the socket, closes the publisher. */
  stop(): Promise<void>;
}

/**
 * Serves `<dataDir>/hook.sock` (0600) for `service`. A socket left by a killed process (nothing
 * answers on it) is replaced; one that a live process serves, or a path that is not a socket, is
 * left alone: then null (hooks take their direct path) and a line in the log.
 */
export async function serveHookSocket(
  service: HookSocketService,
): Promise<HookSocketServer | null> {
  const path = hookSocketPath(service.dataDir);
  const taken = await socketInUse(path);
  if (taken) {
    service.log(`hook socket not served: ${path} ${taken}; hooks run on their own`);
    await service.publisher.close();
    return null;
  }
  const runs = new Set<Promise<void>>();
  const waiting = new Set<Socket>();
  let served = 0;
  const server = createServer((socket) =>
    serveConnection(service, socket, { runs, waiting, taken: () => (served += 1) }),
  );
  try {
    await listenPrivately(server, path);
  } catch (error) {
    service.log(`hook socket not served on ${path}: ${errorMessage(error)}`);
    await service.publisher.close();
    return null;
  }
  const { ino } = statSync(path);
  const removeSocket = () => {
    try {
      if (statSync(path).ino === ino) unlinkSync(path);
    } catch {
      // Gone already.
    }
  };
  // A process that exits without stop() (an uncaught error, process.exit) takes its socket along.
  process.on('exit', removeSocket);
  return {
    path,
    get served() {
      return served;
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of waiting) socket.destroy();
      await Promise.all(runs);
      await closed;
      removeSocket();
      process.off('exit', removeSocket);
      await service.publisher.close();
    },
  };
}

/** `engram start`'s hook socket: the embedded log, and context from the running recall stack. */
export async function serveEmbeddedHookSocket(options: {
  config: EngramConfig;
  dataDir: string;
  /** The recall stack `engram start` serves (its model and store, warm). */
  context: Pick<ContextAnswers, 'buildContext' | 'injectForFile'>;
  log(line: string): void;
}): Promise<HookSocketServer | null> {
  const { config, dataDir, context } = options;
  const memory = hookMemoryOn({
    buildContext: (input) => context.buildContext(input),
    injectForFile: (input) => context.injectForFile(input),
    pendingReviews: (scope) => embeddedPendingReviews(dataDir, scope),
    close: () => Promise.resolve(),
  });
  return serveHookSocket({
    mode: 'embedded',
    dataDir,
    config,
    publisher: await embeddedHookPublisher(config, dataDir, HOOK_BUSY_TIMEOUT_MS),
    openMemory: () => Promise.resolve(memory),
    log: (line) => options.log(line),
  });
}

/** `engram start --distributed`'s hook socket: a Kafka producer, context over recall gRPC. */
export async function serveDistributedHookSocket(options: {
  config: EngramConfig;
  dataDir: string;
  log(line: string): void;
}): Promise<HookSocketServer | null> {
  const { config } = options;
  return serveHookSocket({
    mode: 'distributed',
    dataDir: options.dataDir,
    config,
    publisher: await distributedHookPublisher(config),
    openMemory: (deadline) => grpcHookMemory(config, deadline),
    log: (line) => options.log(line),
  });
}

/** Why `path` cannot be served (a live server, not a socket), or null after removing a stale one. */
async function socketInUse(path: string): Promise<string | null> {
  if (!existsSync(path)) return null;
  if (!lstatSync(path).isSocket()) return 'exists and is not a socket';
  const answer = await new Promise<'live' | 'stale' | 'silent'>((resolve) => {
    const probe = connect(path);
    const timer = setTimeout(() => done('silent'), PROBE_MS);
    function done(verdict: 'live' | 'stale' | 'silent') {
      clearTimeout(timer);
      probe.destroy();
      resolve(verdict);
    }
    probe.on('connect', () => done('live'));
    probe.on('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'stale' : 'silent'),
    );
  });
  if (answer === 'live') return 'is served by another engram process';
  if (answer === 'silent') return 'exists and neither answers nor refuses';
  unlinkSync(path);
  return null;
}

/** Listens on `path` created 0600 (umask around the bind, chmod after for certainty). */
async function listenPrivately(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const mask = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(mask);
    }
  });
  chmodSync(path, 0o600);
}

/** The server's connections: the hooks running, the ones not taken yet, a count of the taken. */
interface Connections {
  runs: Set<Promise<void>>;
  waiting: Set<Socket>;
  taken(): void;
}

function serveConnection(
  service: HookSocketService,
  socket: Socket,
  connections: Connections,
): void {
  const { runs, waiting } = connections;
  let request: HookSocketRequest | null = null;
  let going = false;
  waiting.add(socket);
  socket.setTimeout(IDLE_CONNECTION_MS, () => {
    if (!going) socket.destroy();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => waiting.delete(socket));
  const send = (reply: HookSocketReply) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
  };
  const read = lineReader((message) => {
    if (request === null) {
      request = message as HookSocketRequest;
      const refusal = refusalOf(service, request);
      if (refusal !== null) {
        send({ kind: 'error', message: refusal });
        socket.end();
        return;
      }
      send({ kind: 'accepted', ...answerTimes(request) });
    } else if (!going && (message as { kind?: string }).kind === 'go') {
      // From here this process owns the event: the hook waits for it and does nothing itself.
      going = true;
      waiting.delete(socket);
      connections.taken();
      const run = handle(service, request, send).then(
        () => void socket.end(),
        () => void socket.destroy(), // no ack: the hook takes its direct path
      );
      runs.add(run);
      void run.finally(() => runs.delete(run));
    }
  });
  socket.on('data', (chunk: Buffer) => {
    try {
      read(chunk);
    } catch {
      socket.destroy();
    }
  });
}

/** What the hook allows before its ack (then it goes direct) and its answer (then no context). */
function answerTimes(request: HookSocketRequest): { ackMs: number; doneMs: number } {
  const budget = request.options.budgetMs ?? DEFAULT_HOOK_BUDGET_MS;
  const context = request.options.contextBudgetMs ?? DEFAULT_CONTEXT_BUDGET_MS;
  const ackMs = budget + GIT_LOG_TIMEOUT_MS + GIT_LS_FILES_TIMEOUT_MS + ANSWER_SLACK_MS;
  // After the context, a files-gone FileManifest may take its git listing and its own publishing.
  const filesGoneMs = GIT_LS_FILES_TIMEOUT_MS + budget;
  return { ackMs, doneMs: ackMs + Math.max(budget, context) + filesGoneMs };
}

async function handle(
  service: HookSocketService,
  request: HookSocketRequest,
  send: (reply: HookSocketReply) => void,
): Promise<void> {
  let acknowledged = false;
  const ack = (outcome: HookOutcome) => {
    if (acknowledged) return;
    acknowledged = true;
    send({ kind: 'ack', published: outcome.published, spooled: outcome.spooled });
  };
  const { publisher } = service;
  const outcome = await runHook({
    ...hookRunFor(request.options, request.input, Date.now() - request.elapsedMs, {
      // Open for the process's life: runHook's close after each hook must not close it.
      openPublisher: () => Promise.resolve({ publish: publisher.publish, close: async () => {} }),
      openMemory: (deadline) => service.openMemory(deadline),
      cwd: request.cwd,
    }),
    onDelivered: ack,
  });
  ack(outcome);
  send({ kind: 'done', stdout: outcome.stdout, messages: outcome.messages });
}

/** Why this service must not take `request` (the hook then runs on its own), or null. */
function refusalOf(service: HookSocketService, request: HookSocketRequest): string | null {
  if (request.v !== HOOK_SOCKET_VERSION || request.kind !== 'hook') {
    return `hook socket protocol ${String(request.v)} is not ${HOOK_SOCKET_VERSION}`;
  }
  const mode = request.options.distributed ? 'distributed' : 'embedded';
  if (mode !== service.mode) return `the service runs ${service.mode}, the hook is ${mode}`;
  if (!sameDirectory(request.options.dataDir, service.dataDir)) {
    return `the service serves ${service.dataDir}, not ${request.options.dataDir}`;
  }
  return configRefusal(service.config, request.env);
}

function sameDirectory(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** The hook's settings that decide where its events go and what context it gets. */
function hookSettings(config: EngramConfig): string {
  return JSON.stringify([
    config.topicPrefix,
    config.segmenter.partitions,
    config.kafka.brokers,
    config.schemaRegistry.url,
    config.recall,
    config.distiller.reviewGrpcUrl,
    config.ranking,
  ]);
}

const settingsChecked = new Map<string, string | null>();

/** A hook whose ENGRAM_* environment configures it differently is not served (cached per env). */
function configRefusal(config: EngramConfig, env: Record<string, string>): string | null {
  const key = JSON.stringify([hookSettings(config), env]);
  let refusal = settingsChecked.get(key);
  if (refusal === undefined) {
    try {
      refusal =
        hookSettings(parseConfig(env)) === hookSettings(config)
          ? null
          : "the hook's ENGRAM_* settings differ from the service's";
    } catch (error) {
      refusal = `the hook's configuration is invalid (${errorMessage(error)})`;
    }
    if (settingsChecked.size > 100) settingsChecked.clear();
    settingsChecked.set(key, refusal);
  }
  return refusal;
}
