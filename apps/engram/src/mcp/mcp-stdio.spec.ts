// `engram mcp` end to end (issue #22): the real CLI in a child process (its sources compiled on
// the fly by SWC), driven by the MCP SDK's own Client over stdio (testing/mcp-client.ts), against
// what `engram start` serves embedded — the services on a SQLite log in a temp dir, the review
// API on it, and the recall API on their stores (as start.command composes it), bearer tokens on. The recall corpus has memories of two tenants in one
// project; the reflector proposes MEMORY.md lines from a week of distillations.
import { grpcTokensOf, parseConfig, type EngramConfig } from '@engram/config';
import { SqliteEventLogAdapter, sqliteStoreWriter } from '@engram/embedded';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { INestMicroservice } from '@nestjs/common';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distillerCodecs, prefixedDistillerTopics } from '@engram/app-distiller';
import { until } from '@engram/app-distiller/testing';
import {
  createRecallStack,
  sqliteBackend,
  LEXICAL_ONLY_EMBEDDER,
  publishTombstonesTo,
  RetrievalIndexer,
  serveRecallGrpc,
  type RecallStack,
} from '@engram/app-retrieval';
import {
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  PROJECT,
  rpcCorpus,
  TENANT,
} from '@engram/app-retrieval/testing';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../../libs/core/src/distillation/testing/reflector-fixtures';
import { freePort } from '../../../../test/support/free-port';
import { embeddedHookPublisher, type HookPublisher } from '../commands/hook.command';
import { startEmbeddedServices, type EmbeddedServices } from '../embedded-services';
import { callTool as call, spawnEngramMcp } from '../testing/mcp-client';
import { EPISODE_URI_TEMPLATE, MEMORY_MD_URI } from './mcp-resources';
import { ENGRAM_TOOLS } from './mcp-tools';

const ADMIN = 'mcp-admin-token-000000001'; // both tenants, admin
const READER = 'mcp-read-token-0000000001'; // acme, read only

let dir: string;
let config: EngramConfig;
let services: EmbeddedServices;
let events: HookPublisher;
let stack: RecallStack;
let recallApp: INestMicroservice;
let recallUrl: string;
let reviewUrl: string;
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-mcp-'));
  // The server's working tree (its cwd, no git: the project root) has the file the memories
  // are about: what the tools return is checked against it (mcp-working-tree.ts).
  writeAuthFile();
  const dataDir = join(dir, 'data');
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify({
      [ADMIN]: { tenants: [TENANT, 'globex'], role: 'admin' },
      [READER]: { tenants: [TENANT], role: 'read' },
    }),
    { mode: 0o600 },
  );
  recallUrl = `127.0.0.1:${await freePort()}`;
  reviewUrl = `127.0.0.1:${await freePort()}`;
  config = parseConfig({ ENGRAM_GRPC_TOKENS_FILE: tokensFile });
  const tokens = grpcTokensOf(config);
  services = await startEmbeddedServices({
    config,
    dataDir,
    sweepIntervalMs: 50,
    llm: null,
    retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    reflector: { clock: () => REFLECT_AT, quietMs: 0 },
    review: { url: reviewUrl, tokens },
  });
  const codecs = distillerCodecs(prefixedDistillerTopics(config.topicPrefix));
  await new SqliteEventLogAdapter(services.log).publish(
    codecs.reflector,
    weekOfDistillations().map((distillation) => ({
      v: 1 as const,
      kind: 'distillation' as const,
      tenantId: distillation.tenantId,
      projectId: distillation.projectId,
      distillation,
    })),
  );
  const writer = sqliteStoreWriter(services.retrieval.store);
  await indexRpcCorpus(new RetrievalIndexer(LEXICAL_ONLY_EMBEDDER, writer), rpcCorpus(Date.now()));
  // The recall API as `engram start` serves it embedded (start.command's serveEmbeddedGrpc).
  events = await embeddedHookPublisher(config, dataDir, 5_000);
  stack = createRecallStack({
    ranking: config.ranking,
    backend: sqliteBackend(services.retrieval.store),
    embedder: services.retrieval.embedder,
    publish: events.publish,
    publishTombstones: publishTombstonesTo(
      new SqliteEventLogAdapter(services.log),
      config.topicPrefix,
    ),
  });
  const served = { url: recallUrl, tokens, neighbours: services.graph, logger: false as const };
  ({ app: recallApp } = await serveRecallGrpc(stack, served));
  await until(() => services.distiller.reflector.counters.proposals >= 9, 20_000);
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await recallApp?.close();
  await stack?.access.close();
  await events?.close();
  await services?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `engram mcp <args>` with the services' addresses (and `settings`) in its environment. */
async function engramMcp(args: string[], settings: Record<string, string>): Promise<Client> {
  // The test's own ENGRAM_* variables are not passed on.
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] => !entry[0].startsWith('ENGRAM_') && entry[1] !== undefined,
  );
  const client = await spawnEngramMcp(dir, args, {
    ...Object.fromEntries(inherited),
    ENGRAM_RECALL_GRPC_URL: recallUrl,
    ENGRAM_REVIEW_GRPC_URL: reviewUrl,
    ...settings,
  });
  clients.push(client);
  return client;
}

const acmeArgs = ['--tenant', TENANT, '--project', PROJECT];

describe('engram mcp over stdio, against the embedded engram start', () => {
  let acme: Client;

  beforeAll(async () => {
    acme = await engramMcp(acmeArgs, { ENGRAM_GRPC_TOKEN: ADMIN });
  }, 30_000);

  it('should list its ten tools, the MEMORY.md resource and the episode template', async () => {
    const { tools } = await acme.listTools();
    expect(tools.map((t) => t.name)).toEqual([...ENGRAM_TOOLS]);
    expect(tools.find((t) => t.name === 'recall')?.inputSchema.required).toEqual(['query']);
    expect((await acme.listResources()).resources.map((r) => r.uri)).toEqual([MEMORY_MD_URI]);
    const { resourceTemplates } = await acme.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([EPISODE_URI_TEMPLATE]);
  });

  it("should recall the configured tenant's memories only", async () => {
    const query = { query: 'auth token refresh races with logout', tier: 'memories' };
    const answer = await call(acme, 'recall', query);
    expect(answer.isError).toBe(false);
    expect(answer.text).toMatch(/^recall "auth token refresh races with logout" in acme\/api: /);
    expect(answer.text).toContain('inj-gotcha');
    expect(answer.text).not.toContain('globex');
    // The same token, another configured tenant: the other tenant's memory, and not acme's.
    const globex = await engramMcp(['--tenant', 'globex', '--project', PROJECT], {
      ENGRAM_GRPC_TOKEN: ADMIN,
    });
    const theirs = await call(globex, 'recall', query);
    expect(theirs.text).toContain('globex-gotcha');
    expect(theirs.text).not.toContain('inj-gotcha');
  }, 30_000);

  it('should build context for a session and inject memory for a file', async () => {
    const context = await call(acme, 'build_context', {
      query: 'the logout mutex again',
      session_id: CURRENT_SESSION,
    });
    expect(context.text).toContain('[turn-p-now-3] User: is it the logout mutex again?');
    const injected = await call(acme, 'inject_for_file', {
      file_path: AUTH_FILE,
      tool_name: 'Edit',
    });
    expect(injected.text).toContain('**Memory context for this file:**');
    expect(injected.text).toContain('[inj-gotc]');
    const nothing = await call(acme, 'inject_for_file', { file_path: 'src/unknown.ts' });
    expect(nothing).toEqual({ text: 'no memory about src/unknown.ts', isError: false });
  });

  it('should leave a memory about a deleted file out of injection, and mark it in a recall', async () => {
    rmSync(join(dir, AUTH_FILE));
    try {
      const injected = await call(acme, 'inject_for_file', { file_path: AUTH_FILE });
      expect(injected).toEqual({ text: `no memory about ${AUTH_FILE}`, isError: false });
      const context = await call(acme, 'build_context', {
        query: 'the logout mutex again',
        session_id: CURRENT_SESSION,
      });
      expect(context.text).toContain('[turn-p-now-3]');
      expect(context.text).not.toContain('Work state');
      const found = await call(acme, 'recall', {
        query: 'auth token refresh races with logout',
        tier: 'memories',
      });
      expect(found.text).toMatch(
        /inj-gotcha \([\d.]+\) \[STALE — file no longer exists\] Auth token refresh races/,
      );
    } finally {
      writeAuthFile();
    }
    expect((await call(acme, 'inject_for_file', { file_path: AUTH_FILE })).text).toContain(
      '[inj-gotc]',
    );
    const context = await call(acme, 'build_context', {
      query: 'the logout mutex again',
      session_id: CURRENT_SESSION,
    });
    expect(context.text).toContain('Work state');
  });

  it('should follow an episode chain, and read an episode as a resource', async () => {
    const chain = await call(acme, 'episode_chain', { episode_id: 'e-3' });
    expect(chain.text.split('\n').map((line) => /^\d\. (\S+)/.exec(line)?.[1])).toEqual([
      undefined,
      'e-1',
      'e-2',
      'e-3',
    ]);
    const read = await acme.readResource({ uri: 'engram://episodes/e-2' });
    const page = (read.contents[0] as { text: string }).text;
    expect(page).toMatch(/^# Episode e-2\n/);
    expect(page).toContain('- earlier episodes of its chain: e-1');
    expect(page).toContain('Put the auth token refresh behind the session mutex.');
    await expect(acme.readResource({ uri: 'engram://episodes/e-none' })).rejects.toThrow(
      /no episode e-none in project acme\/api/,
    );
  });

  it('should remember a note, take feedback, and answer neighbours', async () => {
    const noted = await call(acme, 'remember', { text: 'Run the auth tests serially' });
    expect(noted.text).toMatch(/^noted \(event \S+\): it becomes a memory once Engram validates/);
    const flagged = await call(acme, 'feedback', {
      memory_id: 'inj-decision',
      action: 'flag_wrong',
    });
    const confidence = Number(/confidence now (\d\.\d+)/.exec(flagged.text)?.[1]);
    expect(flagged.isError).toBe(false);
    expect(confidence).toBeLessThan(0.9); // the corpus's 0.9, lowered
    // Another tenant's memory is not this server's to touch.
    const theirs = await call(acme, 'feedback', {
      memory_id: 'globex-gotcha',
      action: 'flag_wrong',
    });
    expect(theirs.isError).toBe(true);
    expect(theirs.text).toMatch(/^recall API: .*globex-gotcha/);
    const neighbours = await call(acme, 'neighbors', { file_path: AUTH_FILE });
    expect(neighbours.isError).toBe(false);
    expect(neighbours.text).toContain(AUTH_FILE);
  });

  it('should list, approve and reject proposals, and render MEMORY.md from the approved', async () => {
    const listed = await call(acme, 'review_list', {});
    expect(listed.text).toMatch(/^# 9 pending memory proposals/);
    const [first, second] = [...listed.text.matchAll(/`(p-\d{8}-\d{3})`/g)].map((m) => m[1]);
    const approved = await call(acme, 'review_approve', { proposal_id: first, reviewer: 'tim' });
    expect(approved.text).toMatch(new RegExp(`^${first} approved: (.+)\\n→ user-verified memory `));
    const line = /approved: (.+)\n/.exec(approved.text)![1];
    const rejected = await call(acme, 'review_reject', { proposal_id: second, reason: 'vague' });
    expect(rejected.text).toMatch(new RegExp(`^${second} rejected: `));
    const read = await acme.readResource({ uri: MEMORY_MD_URI });
    const markdown = (read.contents[0] as { text: string }).text;
    expect(markdown).toMatch(/^# MEMORY — acme\/api\n\n_Curated by Engram: 1 memory, /);
    expect(markdown).toContain(`) ${line}\n`);
    expect((await call(acme, 'review_list', {})).text).toMatch(/^# 7 pending/);
    // A proposal of another project (of the same tenant) is not this server's to decide.
    const other = await engramMcp(['--tenant', TENANT, '--project', 'acme/web'], {
      ENGRAM_GRPC_TOKEN: ADMIN,
    });
    expect(
      await call(other, 'review_reject', { proposal_id: listed.text.match(/p-\d{8}-\d{3}/g)![2] }),
    ).toEqual({
      text: expect.stringMatching(/^no proposal p-\d{8}-\d{3} in project acme\/web$/) as string,
      isError: true,
    });
    expect((await call(acme, 'review_list', {})).text).toMatch(/^# 7 pending/);
  }, 30_000);

  it('should refuse bad arguments as tool errors', async () => {
    const noReason = await call(acme, 'feedback', { memory_id: 'inj-gotcha', action: 'correct' });
    expect(noReason).toEqual({
      text: 'reason: required with action "correct" (inaccurate, outdated, too_specific, duplicate)',
      isError: true,
    });
    const badK = await call(acme, 'recall', { query: 'auth', k: 0 });
    expect(badK.isError).toBe(true);
    expect(badK.text).toMatch(/Input validation error/);
  });
});

describe('engram mcp when the services refuse or are not there', () => {
  it('should say which token problem it is', async () => {
    const wrong = await engramMcp(acmeArgs, { ENGRAM_GRPC_TOKEN: 'not-a-known-token-000001' });
    const refused = await call(wrong, 'recall', { query: 'auth' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toBe(
      `the recall API at ${recallUrl} refused the call (authorization: unknown token): set ` +
        'ENGRAM_GRPC_TOKEN for `engram mcp` to a token of the server’s ENGRAM_GRPC_TOKENS_FILE',
    );
    const none = await engramMcp(acmeArgs, {});
    expect((await call(none, 'review_list', {})).text).toMatch(
      /^the review API at .* refused the call \(authorization: a Bearer token is required\)/,
    );
    const reader = await engramMcp(acmeArgs, { ENGRAM_GRPC_TOKEN: READER });
    expect((await call(reader, 'recall', { query: 'auth' })).isError).toBe(false);
    const denied = await call(reader, 'remember', { text: 'Readers cannot write' });
    expect(denied.isError).toBe(true);
    expect(denied.text).toMatch(/^the recall API at .* denied the call \(.*needs a write token/);
  }, 60_000);

  it('should say that engram start is not running where nothing listens', async () => {
    const port = await freePort();
    const lonely = await engramMcp(acmeArgs, {
      ENGRAM_GRPC_TOKEN: ADMIN,
      ENGRAM_RECALL_GRPC_URL: `127.0.0.1:${port}`,
    });
    const answer = await call(lonely, 'build_context', { query: 'auth' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(
      new RegExp(`^engram start is not running at 127\\.0\\.0\\.1:${port} \\(recall API\\)`),
    );
  }, 30_000);
});

function writeAuthFile(): void {
  mkdirSync(dirname(join(dir, AUTH_FILE)), { recursive: true });
  writeFileSync(join(dir, AUTH_FILE), 'export {};\n');
}
