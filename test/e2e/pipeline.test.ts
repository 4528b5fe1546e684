import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { createElasticsearchClient, retrievalIndexNames } from '@engram/elasticsearch';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { recallGrpcClient } from '../../apps/retrieval/src/recall-grpc-client';
import type { InfraEndpoints } from '../integration/support/infra-endpoints';
import { eventually, uniqueName } from '../integration/support/unique';
import { freePort } from '../support/free-port';

// The whole distributed pipeline as an operator runs it: the compiled CLI's
// `engram start --distributed` in a child process (its own topic / index prefix and gRPC ports),
// a recorded Claude Code session fed with `engram replay --wait --distributed`, and the outputs
// read back through the public interfaces only — the gRPC recall API (Recall, GetFileNeighbors,
// BuildContext) and `engram neighbors`. Neo4j has no per-installation namespace: the graph is
// isolated by the run's unique tenant and project ids.

const ROOT = join(__dirname, '..', '..');
const ENGRAM = join(ROOT, 'bin', 'engram');
/** What `engram demo` replays: one developer's morning (a fix, a user correction, a new task). */
const RECORDING = join(ROOT, 'apps', 'engram', 'demo', 'demo-session.jsonl');

const CORRECTION = "no, don't mock Date.now in the refresh test";
/** What the distilled memory keeps of it: the user's words without the "no," (issue #23). */
const LESSON = "Correction: don't mock Date.now in the refresh test, use vitest fake timers";
/** Read together in the session's first prompt (Read, Read, Edit within three steps). */
const FILE = 'src/auth/refresh.ts';
const READ_WITH_IT = 'src/auth/session.ts';
/** Touched an hour later in another episode, far beyond the co-access window. */
const UNRELATED = 'CHANGELOG.md';

// ---- the recording, under this run's ids --------------------------------------------------------

interface RecordedEvent {
  type: string;
  eventId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  promptId?: number;
  source?: string;
  text?: string;
  toolName?: string;
  filePaths?: string[];
  explicitThreadId?: string | null;
  [field: string]: unknown;
}

interface Recording {
  tenantId: string;
  projectId: string;
  sessionId: string;
  events: RecordedEvent[];
}

/** The shipped session with fresh tenant, project, session and event ids (nothing is shared). */
function recordingForRun(run: string): Recording {
  const tenantId = `${run}-acme`;
  const projectId = `${run}-acme/webshop`;
  const sessionId = `${run}-session-1`;
  const events = readFileSync(RECORDING, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const event = JSON.parse(line) as RecordedEvent;
      return {
        ...event,
        eventId: randomUUID(),
        tenantId,
        projectId,
        sessionId,
        ...(event.explicitThreadId === event.sessionId && { explicitThreadId: sessionId }),
      };
    });
  return { tenantId, projectId, sessionId, events };
}

// ---- child processes ----------------------------------------------------------------------------

/** `engram start --distributed`, its output kept for the failure messages. */
class Engram {
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [ENGRAM, 'start', '--distributed'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => this.output.push(chunk.toString());
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Throws with the child's output when it has exited: a dead service fails the test at once. */
  assertRunning(): void {
    if (!this.running) {
      throw new Error(
        `engram start --distributed exited (code ${this.child.exitCode}, signal ` +
          `${this.child.signalCode}):\n${this.tail()}`,
      );
    }
  }

  /** The last lines of its output, colours and kafkajs chatter left out. */
  tail(chars = 4_000): string {
    return (
      this.output
        .join('')
        // eslint-disable-next-line no-control-regex
        .replace(/\x1b\[[0-9;]*m/g, '')
        .split('\n')
        .filter((line) => !line.includes('[kafkajs:'))
        .join('\n')
        .slice(-chars)
    );
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One `engram` command to completion (killed after `timeoutMs`). */
function engramCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENGRAM, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---- the gRPC recall API as any client sees it (snake_case, int64 as numbers) -------------------

type Unary = (
  request: object,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, response?: unknown) => void,
) => void;
type RecallClient = Record<string, Unary> & { close(): void };

function rpc<R>(client: RecallClient, method: string, request: object): Promise<R> {
  return new Promise((resolve, reject) => {
    client[method](request, new Metadata(), { deadline: Date.now() + 15_000 }, (error, response) =>
      error ? reject(error) : resolve(response as R),
    );
  });
}

interface Provenance {
  tenant_id: string;
  project_id: string;
  session_ids: string[];
  episode_ids: string[];
  prompt_ids: number[];
  event_ids: string[];
  memory_id: string;
}

interface EpisodeItem {
  episode_id: string;
  session_id: string;
  first_prompt_id: number;
  last_prompt_id: number;
  ended_at_ms: number;
  intent: string;
  hot_files: { path: string; touches: number }[];
  tools_used: string[];
  failures: number;
}

interface MemoryItem {
  memory_id: string;
  type: string;
  content: string;
  source: string;
  confidence: number;
}

interface RecallResult {
  tier: string;
  memory?: MemoryItem;
  episode?: EpisodeItem;
  text: string;
  provenance: Provenance;
}

interface FileNeighbor {
  path: string;
  weight: number;
  raw_count: number;
  source: string;
}

interface ContextItem {
  citation_id: string;
  kind: string;
  text: string;
  provenance: Provenance;
}

interface BuildContextResponse {
  items: ContextItem[];
  rendered: string;
  tokens_used: number;
}

/** What `engram neighbors --json` prints. */
interface NeighborsReport {
  project: string;
  tenant: string | null;
  file: string;
  neighbors: {
    file: string;
    weight: number;
    rawCount: number;
    sessionCount: number;
    source: string;
  }[];
}

// ---- the test -----------------------------------------------------------------------------------

describe('engram start --distributed, end to end', () => {
  const run = uniqueName('e2e');
  const prefix = `${run}.`;
  const recording = recordingForRun(run);
  const scope = { tenant_id: recording.tenantId, project_id: recording.projectId };
  const correction = recording.events.find((e) => e.text?.startsWith(CORRECTION));
  const userPrompts = recording.events.filter(
    (e) => e.type === 'PromptSubmitted' && e.source === 'user',
  );
  const lastPromptId = Math.max(...userPrompts.map((e) => e.promptId ?? 0));
  const dir = mkdtempSync(join(tmpdir(), 'engram-e2e-'));
  const replayFile = join(dir, 'session.jsonl');
  let env: NodeJS.ProcessEnv;
  let engram: Engram | undefined;
  let client: RecallClient;
  let episodes: EpisodeItem[] = [];

  beforeAll(async () => {
    if (!correction?.promptId || !correction.text) {
      throw new Error(`${RECORDING} no longer has the user's correction "${CORRECTION}…"`);
    }
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    writeFileSync(replayFile, recording.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const infra: InfraEndpoints = inject('infra');
    const recallUrl = `127.0.0.1:${await freePort()}`;
    env = {
      ...process.env,
      ENGRAM_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: infra.registryUrl,
      ENGRAM_ES_URL: infra.elasticsearchUrl,
      ENGRAM_NEO4J_URL: infra.neo4jUrl,
      // Topics, consumer groups, transactional ids and Elasticsearch indices of this run only.
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_RECALL_GRPC_URL: recallUrl,
      ENGRAM_REVIEW_GRPC_URL: `127.0.0.1:${await freePort()}`,
      // No tenant mapping: requests name their tenant.
      ENGRAM_RECALL_TOKEN: undefined,
      // The extractive distiller: the same memories on every machine.
      ENGRAM_LLM_BASE_URL: undefined,
      ENGRAM_LLM_MODEL: undefined,
    };
    engram = new Engram(env);
    client = recallGrpcClient<RecallClient>(recallUrl);
  });

  afterAll(async () => {
    client?.close();
    if (engram?.running) {
      engram.kill('SIGKILL');
      await engram.exited;
    }
    rmSync(dir, { recursive: true, force: true });
    const es = createElasticsearchClient(inject('infra').elasticsearchUrl);
    try {
      for (const index of Object.values(retrievalIndexNames(prefix))) {
        await es.indices.delete({ index, ignore_unavailable: true });
        await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
      }
    } finally {
      await es.close();
    }
  });

  /** Polls `probe` while the service is alive; its output is in the error when it is not. */
  async function until<T>(
    what: string,
    probe: () => Promise<T | undefined>,
    timeoutMs: number,
  ): Promise<T> {
    let last: unknown;
    try {
      return await eventually(
        async () => {
          engram!.assertRunning();
          try {
            return await probe();
          } catch (error) {
            last = error;
            return undefined;
          }
        },
        { timeoutMs, intervalMs: 500 },
      );
    } catch (error) {
      engram!.assertRunning();
      throw new Error(
        `${what}: ${String(error)}; last error: ${String(last)}\n--- engram start ---\n${engram!.tail()}`,
        { cause: error },
      );
    }
  }

  it('should serve the gRPC recall API once started', async () => {
    const started = Date.now();
    const answer = await until(
      'the recall API',
      () =>
        rpc<{ neighbors: FileNeighbor[] }>(client, 'GetFileNeighbors', {
          scope,
          file_path: FILE,
        }),
      90_000,
    );
    console.log(
      `[e2e] recall API serving ${((Date.now() - started) / 1000).toFixed(1)} s after spawn`,
    );
    // Nothing replayed yet: the run's project is empty.
    expect(answer.neighbors).toEqual([]);
    // The operator is told it runs, and where (the gRPC servers once silenced these lines).
    await until(
      'the running line',
      () => {
        const said = engram!.output.join('');
        const printed =
          said.includes('running distributed') &&
          said.includes(`gRPC recall API (${env.ENGRAM_RECALL_GRPC_URL})`);
        return Promise.resolve(printed ? true : undefined);
      },
      30_000,
    );
  }, 130_000);

  it('should take the recorded session through `engram replay --wait --distributed`', async () => {
    engram!.assertRunning();
    const started = Date.now();
    const result = await Promise.race([
      engramCli(
        ['replay', '--file', replayFile, '--wait', '--distributed', '--timeout', '90'],
        env,
        100_000,
      ),
      engram!.exited.then(() => {
        engram!.assertRunning();
        throw new Error('unreachable');
      }),
    ]);
    console.log(`[e2e] replay --wait took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(result.code, `${result.stdout}\n${result.stderr}\n${engram!.tail()}`).toBe(0);
    expect(result.stdout).toContain(
      `${recording.events.length} event(s) published, 0 line(s) rejected to the dead-letter topics; every event processed`,
    );
    // `--wait` waited for the whole chain, the indexer of what the segmenter and distiller wrote
    // included: its offsets are committed after Elasticsearch took the documents. Elasticsearch
    // makes them searchable at its next refresh (1 s), so the recall may wait that long (once in
    // CI a recall 2.5 s after a fast replay found none). (A session's last episode closes on the
    // segmenter's timer, so the tests below still wait for that one.)
    const indexed = async (tier: string) => {
      const answer = await rpc<{ results: RecallResult[] }>(client, 'Recall', {
        scope,
        query: 'refresh token test',
        tier,
        k: 5,
      });
      return answer.results.length;
    };
    const found = (tier: string) =>
      eventually(async () => ((await indexed(tier)) > 0 ? true : undefined), {
        timeoutMs: 3_000,
        intervalMs: 250,
      });
    expect(await found('TIER_EPISODES')).toBe(true);
    expect(await found('TIER_MEMORIES')).toBe(true);
  }, 110_000);

  it("should segment the session into episodes (the recall API's episode tier)", async () => {
    episodes = await until(
      'episodes up to the last prompt',
      async () => {
        const answer = await rpc<{ results: RecallResult[] }>(client, 'Recall', {
          scope,
          query: 'refresh token checkout test rate limit product search release notes',
          tier: 'TIER_EPISODES',
          k: 20,
        });
        const found = answer.results.flatMap((r) => (r.episode ? [r.episode] : []));
        // The last episode closes on SessionEnded, on the segmenter's timer.
        return found.some((e) => e.last_prompt_id === lastPromptId) ? found : undefined;
      },
      60_000,
    );
    episodes.sort((a, b) => a.first_prompt_id - b.first_prompt_id);
    console.log(
      `[e2e] episodes: ${episodes.map((e) => `${e.first_prompt_id}-${e.last_prompt_id}`).join(', ')}`,
    );
    expect(new Set(episodes.map((e) => e.session_id))).toEqual(new Set([recording.sessionId]));
    // Every user prompt in exactly one episode, in order, without gaps or overlaps.
    expect(episodes[0].first_prompt_id).toBe(1);
    for (let i = 1; i < episodes.length; i += 1) {
      expect(episodes[i].first_prompt_id).toBe(episodes[i - 1].last_prompt_id + 1);
    }
    expect(episodes.every((e) => e.ended_at_ms > 0)).toBe(true);
    // The intent shifts split the work: the fix with the user's correction of it (hybrid
    // segmentation, the default, keeps a correction in the work unit it corrects), then the rate
    // limiting, then the release notes.
    const episodeOf = (promptId: number) =>
      episodes.find((e) => e.first_prompt_id <= promptId && promptId <= e.last_prompt_id)!;
    expect(episodeOf(1).episode_id).toBe(episodeOf(correction!.promptId!).episode_id);
    const rateLimit = userPrompts.find((e) => e.text?.includes('rate limiting'))!;
    const releaseNotes = userPrompts.find((e) => e.text?.includes('release notes'))!;
    expect(episodeOf(rateLimit.promptId!).episode_id).not.toBe(
      episodeOf(releaseNotes.promptId!).episode_id,
    );
    expect(episodeOf(correction!.promptId!).episode_id).not.toBe(
      episodeOf(rateLimit.promptId!).episode_id,
    );
    // Annotated from the tool calls of its prompt range.
    const first = episodeOf(1);
    expect(first.hot_files.map((f) => f.path)).toEqual(
      expect.arrayContaining([FILE, READ_WITH_IT]),
    );
    expect(first.tools_used).toEqual(expect.arrayContaining(['Read', 'Edit', 'Bash']));
    expect(first.failures).toBe(1);
    expect(first.intent).toBe(userPrompts[0].text);
  }, 70_000);

  it("should distil the user's correction into a memory Recall returns with its provenance", async () => {
    const hit = await until(
      'the correction memory',
      async () => {
        const answer = await rpc<{ results: RecallResult[] }>(client, 'Recall', {
          scope,
          query: 'how do we fake time in the refresh tests?',
          tier: 'TIER_MEMORIES',
          k: 10,
        });
        // (The edit the correction led to is a `pattern` memory quoting it too.)
        return answer.results.find(
          (r) => r.memory?.type === 'gotcha' && r.memory.content.includes(LESSON),
        );
      },
      60_000,
    );
    const memory = hit.memory!;
    expect(memory.source).toBe('distilled');
    expect(memory.confidence).toBeGreaterThanOrEqual(0.65);
    expect(hit.provenance.tenant_id).toBe(recording.tenantId);
    expect(hit.provenance.project_id).toBe(recording.projectId);
    expect(hit.provenance.session_ids).toEqual([recording.sessionId]);
    expect(hit.provenance.memory_id).toBe(memory.memory_id);
    // Traced to the very prompt the user typed, and to the episode holding it (hybrid
    // segmentation keeps a correction in the work unit it corrects).
    expect(hit.provenance.event_ids).toContain(correction!.eventId);
    const promptId = correction!.promptId!;
    const episode = episodes.find(
      (e) => e.first_prompt_id <= promptId && promptId <= e.last_prompt_id,
    );
    expect(episode, 'the episode holding the correction').toBeDefined();
    expect(hit.provenance.episode_ids).toContain(episode!.episode_id);
  }, 70_000);

  it('should find the files read together: GetFileNeighbors and `engram neighbors`', async () => {
    const neighbours = await until(
      `co-access neighbours of ${FILE}`,
      async () => {
        const answer = await rpc<{ file_path: string; neighbors: FileNeighbor[] }>(
          client,
          'GetFileNeighbors',
          { scope, file_path: FILE, k: 10 },
        );
        return answer.neighbors.some((n) => n.path === READ_WITH_IT) ? answer.neighbors : undefined;
      },
      60_000,
    );
    // Read together within the co-access window: the best prediction, from a co-access edge.
    const session = neighbours[0];
    expect(session).toMatchObject({ path: READ_WITH_IT, source: 'co_access' });
    // One session, and it had both: sessions with both / sessions with either = 1.
    expect(session.weight).toBe(1);
    expect(session.raw_count).toBeGreaterThanOrEqual(1);
    // Touched an hour later: at best a weaker same-session prediction, never a co-access edge.
    const coAccessed = neighbours.filter((n) => n.source === 'co_access').map((n) => n.path);
    expect(coAccessed).not.toContain(UNRELATED);
    expect(neighbours.map((n) => n.path)).not.toContain(FILE);

    const cli = await engramCli(
      ['neighbors', '--project', recording.projectId, '--file', FILE, '--distributed', '--json'],
      env,
      60_000,
    );
    expect(cli.code, `engram neighbors: ${cli.stderr}`).toBe(0);
    const report = JSON.parse(cli.stdout) as NeighborsReport;
    // The tenant is found from the project (this run's project exists for one tenant only).
    expect(report.tenant).toBe(recording.tenantId);
    expect(report.file).toBe(FILE);
    // One definition serves both (libs/core predictFileNeighbours): the same list, in order.
    expect(report.neighbors.map((n) => n.file)).toEqual(neighbours.map((n) => n.path));
    expect(report.neighbors.find((n) => n.file === READ_WITH_IT)).toMatchObject({
      weight: 1,
      rawCount: session.raw_count,
      sessionCount: 1,
    });
  }, 90_000);

  it('should tell the next session what the first one taught (BuildContext)', async () => {
    const nextSession = `${run}-session-2`;
    const context = await until(
      'the correction in the next session',
      async () => {
        const answer = await rpc<BuildContextResponse>(client, 'BuildContext', {
          scope,
          session_id: nextSession,
          query: 'add a test for the token refresh expiry; how should the test control time?',
          phase: 'UNIVERSAL_PHASE_IMPLEMENT',
        });
        return answer.rendered.includes(LESSON) ? answer : undefined;
      },
      30_000,
    );
    const taught = context.items.find(
      (item) => item.kind === 'CONTEXT_ITEM_KIND_MEMORY' && item.text.includes(LESSON),
    );
    expect(taught, `the correction among the items of:\n${context.rendered}`).toBeDefined();
    expect(taught!.provenance.session_ids).toEqual([recording.sessionId]);
    expect(taught!.provenance.event_ids).toContain(correction!.eventId);
    // Cited in the text the agent is given.
    expect(taught!.citation_id).not.toBe('');
    expect(context.rendered).toContain(taught!.citation_id);
    expect(context.tokens_used).toBeGreaterThan(0);
    // Nothing of another tenant or project.
    for (const item of context.items) {
      expect(item.provenance.tenant_id).toBe(recording.tenantId);
      expect(item.provenance.project_id).toBe(recording.projectId);
    }
  }, 40_000);

  it('should stop on SIGTERM with exit code 0', async () => {
    engram!.assertRunning();
    const started = Date.now();
    engram!.kill('SIGTERM');
    const exit = await withinMs(engram!.exited, 45_000, 'exit after SIGTERM');
    console.log(`[e2e] stopped ${((Date.now() - started) / 1000).toFixed(1)} s after SIGTERM`);
    // A graceful stop is a clean exit, as in embedded mode (not death by the re-raised signal).
    expect(exit, `engram start output:\n${engram!.tail()}`).toEqual({ code: 0, signal: null });
  }, 50_000);
});
