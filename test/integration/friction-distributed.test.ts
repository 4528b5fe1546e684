// `engram friction-report --distributed` on the real servers. The FrictionSource contract (the
// embedded source passes it in the unit tier) on the distributed source: user turns, memories and
// tool calls through the retrieval indexer into Elasticsearch (indices of a unique prefix), the
// accesses through the Elasticsearch store's write-back. Then the command end to end, with its
// endpoint and index prefix from the configuration.
import { resetConfigForTests } from '@engram/config';
import type { AccessUpdate, FrictionReportWithGaps } from '@engram/core';
import {
  BulkWriter,
  createElasticsearchClient,
  elasticsearchStoreWriter,
  elasticsearchToolCallWriter,
  ElasticsearchFrictionReads,
  ensureRetrievalIndices,
  ensureToolCallIndex,
  retrievalIndexNames,
  toolCallIndexName,
} from '@engram/elasticsearch';
import { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  DISTRIBUTED_FRICTION_GAPS,
  DistributedFrictionSource,
} from '../../apps/engram/src/commands/friction-distributed-source';
import { indexFrictionData } from '../../apps/engram/src/commands/friction-distributed-replay';
import { registerFrictionReportCommand } from '../../apps/engram/src/commands/friction-report.command';
import {
  distributedPlantedFound,
  generateDistributedOrganisation,
  measureDistributedReport,
} from '../../apps/engram/src/commands/friction-distributed-bench';
import { elasticsearchRecallStore } from '../../apps/retrieval/src/recall-store';
import { RetrievalIndexer } from '../../apps/retrieval/src/retrieval-indexer';
import {
  describeFrictionSourceContract,
  frictionContractData,
  type FrictionContractData,
} from '../../libs/core/src/ports/testing/friction-source.contract';
import { contractEmbedder } from '../../libs/core/src/ports/testing/recall-store.contract';
import { uniqueName } from './support/unique';

/** The server and an index prefix of one test file (its indices removed afterwards). */
function distributedStores(prefix: string) {
  const accessStore = () => elasticsearchRecallStore(client, indices, { counters: null });
  const infra = inject('infra');
  const client = createElasticsearchClient(infra.elasticsearchUrl);
  const indexPrefix = `${uniqueName(prefix)}.`;
  const indices = {
    ...retrievalIndexNames(indexPrefix),
    toolCalls: toolCallIndexName(indexPrefix),
  };
  return {
    client,
    indices,
    /** A tenant no other test (or earlier run) uses. */
    tenant: (name: string) => uniqueName(name),
    async setUp() {
      await ensureRetrievalIndices(client, indices, { dims: contractEmbedder().dims });
      await ensureToolCallIndex(client, indices.toolCalls);
    },
    /** The data through the indexer and the store's access write-back. */
    writer: () => elasticsearchStoreWriter(BulkWriter.forClient(client), indices),
    toolCallWriter: () =>
      elasticsearchToolCallWriter(BulkWriter.forClient(client), indices.toolCalls),
    writeAccess: (updates: AccessUpdate[]) => accessStore().writeAccess(updates),
    /** A source on these indices, `pageSize` documents or buckets a request. */
    source: (pageSize?: number) =>
      new DistributedFrictionSource({
        elasticsearch: new ElasticsearchFrictionReads(client, indices, { pageSize }),
        endpoints: { elasticsearch: 'test' },
        close: () => Promise.resolve(),
      }),
    async replay(data: FrictionContractData) {
      await indexFrictionData(data, this.writer(), this.writeAccess, this.toolCallWriter());
      await client.indices.refresh({ index: Object.values(indices) });
    },
    async close() {
      await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
      await client.close();
    },
  };
}

describeFrictionSourceContract('distributed (Elasticsearch)', async () => {
  const stores = distributedStores('it-friction-contract');
  await stores.setUp();
  return {
    tenant: (prefix: string) => stores.tenant(prefix),
    replay: async (data) => {
      await stores.replay(data);
      // Pages of 2 buckets or documents: the composite `after` keys and the point-in-time pages
      // are followed across several requests.
      return stores.source(2);
    },
    close: () => stores.close(),
  };
});

describe('tool calls through the retrieval indexer (real Elasticsearch)', () => {
  const stores = distributedStores('it-friction-calls');
  const tenantId = stores.tenant('friction-calls');
  const data = frictionContractData(tenantId);

  beforeAll(() => stores.setUp(), 120_000);
  afterAll(() => stores.close());

  it('should land a tool call once when it is delivered twice, tenant and all', async () => {
    const indexer = new RetrievalIndexer(
      contractEmbedder(),
      stores.writer(),
      null,
      stores.toolCallWriter(),
    );
    const call = data.toolCalls[0];
    const delivery = (offset: string) => ({
      event: call,
      topic: 'agent.tool-calls.v1',
      partition: 0,
      offset,
      key: call.sessionId,
      headers: {},
    });
    // A redelivery after a lost commit: the same event in a second batch.
    await indexer.handleToolCalls([delivery('0')]);
    await indexer.handleToolCalls([delivery('0'), delivery('1')]);
    await stores.client.indices.refresh({ index: stores.indices.toolCalls });
    const { count } = await stores.client.count({
      index: stores.indices.toolCalls,
      query: { term: { tenantId } },
    });
    expect(count).toBe(1);
    const stored = await stores.client.get({ index: stores.indices.toolCalls, id: call.eventId });
    expect(stored._source).toMatchObject({
      tenantId,
      sessionId: call.sessionId,
      command: 'npm run migrate',
      failed: true,
      errorPattern: 'ECONNREFUSED <n>:<n> in <path>',
      durationMs: 6_000,
      tokensUsed: 100,
    });
    expect(indexer.counters.embedded).toBe(0);
  });
});

describe('engram friction-report --distributed (real Elasticsearch)', () => {
  const stores = distributedStores('it-friction-cli');
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-distributed-'));
  const tenantId = stores.tenant('friction-cli');
  const data = frictionContractData(tenantId);
  const saved = { ...process.env };

  beforeAll(async () => {
    await stores.setUp();
    await stores.replay(data);
    const infra = inject('infra');
    process.env.ENGRAM_ES_URL = infra.elasticsearchUrl;
    // The proposals go to review on memory.proposals.v1 of this Kafka (issue #21's review loop).
    process.env.ENGRAM_KAFKA_BROKERS = infra.kafkaBrokers.join(',');
    process.env.ENGRAM_SCHEMA_REGISTRY_URL = infra.registryUrl;
    // The indices' prefix is the topic prefix, as for every service and --distributed command.
    process.env.ENGRAM_TOPIC_PREFIX = stores.indices.turns.slice(0, -'engram-turns'.length);
    resetConfigForTests();
  }, 120_000);
  afterAll(async () => {
    process.env = saved;
    resetConfigForTests();
    rmSync(dir, { recursive: true, force: true });
    await stores.close();
  });

  it('should write md, json and html from aggregations, naming what it cannot read', async () => {
    const out = join(dir, 'report');
    const messages: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((message: string) => void messages.push(message));
    const program = new Command().exitOverride();
    registerFrictionReportCommand(program);
    const started = Date.now();
    await program.parseAsync([
      'node',
      'engram',
      'friction-report',
      '--distributed',
      '--no-progress',
      '--tenant',
      tenantId,
      '--until',
      '2026-11-26T09:00:00Z',
      '--window',
      '7d',
      '--min-sessions',
      '3',
      '--min-events',
      '10',
      '--format',
      'md,json,html',
      '--out',
      out,
    ]);
    const seconds = (Date.now() - started) / 1000;
    vi.restoreAllMocks();
    console.log(`friction-report --distributed on the contract data: ${seconds.toFixed(2)} s`);
    expect(process.exitCode ?? 0).toBe(0);
    expect(messages.filter((m) => m.startsWith('wrote '))).toHaveLength(3);
    expect(messages).toContainEqual(
      expect.stringMatching(/^\d+ proposals in review \(\d+ written;/),
    );

    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as FrictionReportWithGaps;
    expect(report.totals.sessions).toBe(4);
    const titles = report.proposals.map((p) => `${p.kind}: ${p.title}`);
    expect(titles).toEqual(
      expect.arrayContaining([
        'recurring-failure: Bash `npm run migrate` keeps failing with "ECONNREFUSED <n>:<n> in <path>"',
        'recurring-failure: Bash `make e2e` keeps failing with "flaky run <n>"',
        `stale-memory: Stale gotcha still injected: "refresh.ts retries twice"`,
      ]),
    );
    expect(report.proposals.map((p) => p.kind)).toContain('repeated-correction');
    // The retry loop of the same command is one finding with that failure (as in embedded
    // mode, now that the tool calls name the command), and its failed calls are in the timeline.
    expect(report.proposals.find((p) => p.title.includes('`make e2e`'))?.alsoSeenAs).toEqual([
      'tool-misuse',
    ]);
    expect(report.timeline).toEqual(
      expect.arrayContaining([{ day: '2026-11-20', count: 6, kind: 'tool-misuse' }]),
    );
    const sessions = new Set([...data.prompts, ...data.toolCalls].map((e) => e.sessionId));
    const events = new Set([...data.prompts, ...data.toolCalls].map((e) => e.eventId));
    for (const { evidence } of report.proposals) {
      expect(evidence.sessionIds.length + evidence.memoryIds.length).toBeGreaterThan(0);
      for (const id of evidence.eventIds) expect(events).toContain(id);
    }
    // Evidence sessions resolve to replayed sessions (a stale memory names its provenance).
    const named = report.proposals
      .filter((p) => p.kind !== 'stale-memory')
      .flatMap((p) => p.evidence.sessionIds);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((id) => !sessions.has(id))).toEqual([]);
    const migrate = report.proposals.find((p) => p.title.includes('ECONNREFUSED'));
    expect(migrate).toMatchObject({
      sessions: 4,
      projectIds: [`${tenantId}/api`, `${tenantId}/web`],
    });
    expect(report.unavailable).toEqual(expect.arrayContaining([...DISTRIBUTED_FRICTION_GAPS]));

    const markdown = readFileSync(`${out}.md`, 'utf8');
    expect(markdown).not.toContain('- retry-loops:');
    expect(markdown).not.toContain('- failure-timeline:');
    expect(markdown).toContain('- totals: narrower in distributed mode — ');
    const html = readFileSync(`${out}.html`, 'utf8');
    expect(html).toContain('<div class="unavailable">');
    expect(html).toContain('<li>totals: narrower in distributed mode');
  });
});

describe('the distributed report on a generated organisation (real Elasticsearch)', () => {
  const stores = distributedStores('it-friction-org');
  const tenantId = stores.tenant('friction-org');
  const size = { developers: 10, weeks: 2, turnsPerSession: 10, callsPerSession: 200 };

  beforeAll(() => stores.setUp(), 120_000);
  afterAll(() => stores.close());

  it('should find the planted frictions from aggregations, in seconds', async () => {
    const organisation = await generateDistributedOrganisation(tenantId, size, {
      writer: stores.writer(),
      writeAccess: stores.writeAccess,
      toolCalls: stores.toolCallWriter(),
    });
    await stores.client.indices.refresh({ index: Object.values(stores.indices) });
    const measured = await measureDistributedReport(stores.source(), tenantId, size.weeks);
    console.log(
      `distributed friction report: ${organisation.sessions} sessions, ${organisation.turns} ` +
        `user turns, ${organisation.events} events: ${measured.seconds.toFixed(2)} s, RSS ` +
        `${measured.rssMb.before} → ${measured.rssMb.peak} MB, ` +
        `${measured.report.proposals.length} proposals`,
    );
    expect(measured.report.totals).toEqual({
      sessions: organisation.sessions,
      events: organisation.events,
    });
    const { planted, found } = distributedPlantedFound(measured.report);
    expect(found / planted).toBeGreaterThanOrEqual(0.9);
    // Noise (one-off failures and corrections) makes no proposal; each planted correction is
    // one proposal per project it was said in.
    const kinds = new Set(measured.report.proposals.map((p) => p.kind));
    expect([...kinds].sort()).toEqual([
      'recurring-failure',
      'repeated-correction',
      'stale-memory',
      'tool-misuse',
    ]);
    // The planted retry loop (every 4th session): a habit of each project, one proposal (one
    // command), and nothing else as misuse.
    const misuse = measured.report.proposals.filter((p) => p.kind === 'tool-misuse');
    expect(misuse).toHaveLength(1);
    expect(misuse[0].title).toContain('`make e2e`');
    expect(misuse[0].projectIds).toHaveLength(2);
    expect(misuse[0].sessions).toBe(organisation.sessions / 8);
    expect(
      measured.report.proposals
        .filter((p) => p.kind === 'recurring-failure')
        .map((p) => p.sessions),
    ).toHaveLength(4);
  });
});
