// `engram review` with inferred memories (issue #20), embedded: memories flagged needsReview are
// indexed into the SQLite store by the embedded indexer; the command (its own connections to the
// data directory, as from another process) lists them after the proposals and decides on them
// through Feedback — approve is CONFIRM, reject is DELETE (a tombstone on the log).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileGotcha, PROJECT, TENANT } from '@engram/app-retrieval/testing';
import type { Memory } from '@engram/contracts';
import { isLoggedTombstone } from '@engram/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMemories, type EmbeddedMemories } from '../testing/embedded-memories';
import { storedMemories } from './memory-lifecycle';
import { formatMemoryReviews, namesMemory } from './memory-review';
import { embeddedReviewBackend, runReview, type ReviewBackend } from './review.command';

const NOW = Date.UTC(2026, 10, 20, 9, 0, 0);
const SCOPE = { tenantId: TENANT, projectId: PROJECT };

function inferred(memoryId: string, content: string, needsReview: boolean): Memory {
  return {
    ...fileGotcha(SCOPE, memoryId, content, 'src/auth/session.ts', NOW),
    source: 'observer_inferred',
    confidence: 0.6,
    userVerified: false,
    needsReview,
  };
}

const MEMORIES = [
  inferred('m-review-1', 'Token refresh races the session cookie writer', true),
  inferred('m-review-2', 'The auth tests need the fake clock', true),
  inferred('m-settled', 'Session ids are uuid v4', false),
];

describe('engram review: inferred memories flagged needsReview (embedded)', () => {
  let fixture: EmbeddedMemories;
  let backend: ReviewBackend;

  const stored = async (id: string) =>
    (await storedMemories(fixture.retrieval.store, SCOPE, [id]))[0];

  beforeEach(async () => {
    // No embedding model: an approval indexes lexically, fast and the same on every machine.
    vi.stubEnv('ENGRAM_MODELS_DIR', join(tmpdir(), 'engram-no-models'));
    fixture = await startEmbeddedMemories('memory-review', MEMORIES);
    backend = embeddedReviewBackend(fixture.dir, { timeoutMs: 1_000 });
  });

  afterEach(async () => {
    await backend.close();
    await fixture.stop();
    vi.unstubAllEnvs();
  });

  it('should tell memory ids from proposal ids', () => {
    expect(namesMemory('p-20260215-001')).toBe(false);
    expect(namesMemory('m-review-1')).toBe(true);
  });

  it('lists the memories to review after the proposals, the proposal output unchanged', async () => {
    const run = await runReview(
      backend,
      { kind: 'list', project: PROJECT, status: 'pending' },
      { tenant: TENANT },
    );
    // Created at the same time: by id.
    expect(run).toEqual({
      stdout: `no pending proposals\n\n${formatMemoryReviews([MEMORIES[0], MEMORIES[1]])}`,
      stderr: '',
      exitCode: 0,
    });
    expect(run.stdout).toContain('# 2 inferred memories to review');
    expect(run.stdout).toContain('`m-review-1` acme/api: Token refresh races the session cookie');
    expect(run.stdout).not.toContain('m-settled');
    const json = JSON.parse(
      (
        await runReview(
          backend,
          { kind: 'list', project: PROJECT, status: 'pending' },
          { tenant: TENANT, json: true },
        )
      ).stdout,
    ) as { proposals: unknown[]; memories: Memory[] };
    expect(json.proposals).toEqual([]);
    expect(json.memories.map((m) => m.memoryId).sort()).toEqual(['m-review-1', 'm-review-2']);
    // Without a project (or for decided proposals) the listing is the proposals' alone.
    const plain = await runReview(backend, { kind: 'list', status: 'pending' }, {});
    expect(plain.stdout).toBe('no pending proposals');
    const rejected = await runReview(
      backend,
      { kind: 'list', project: PROJECT, status: 'rejected' },
      { tenant: TENANT },
    );
    expect(rejected.stdout).toBe('no rejected proposals');
  });

  it('approve = Feedback CONFIRM (user-verified, out of the queue); reject = Feedback DELETE', async () => {
    const approved = await runReview(
      backend,
      { kind: 'approve', id: 'm-review-1', project: PROJECT },
      { by: 'alice' },
    );
    expect(approved.exitCode).toBe(0);
    expect(approved.stdout).toBe(
      'm-review-1 approved: Token refresh races the session cookie writer\n' +
        '  → user-verified memory (confidence 0.90)',
    );
    await fixture.indexed();
    expect(await stored('m-review-1')).toMatchObject({
      userVerified: true,
      needsReview: false,
      confidence: 0.9,
      userId: 'alice',
    });

    const rejected = await runReview(
      backend,
      { kind: 'reject', id: 'm-review-2', project: PROJECT },
      { json: true },
    );
    expect(JSON.parse(rejected.stdout)).toEqual({
      memory: {
        memoryId: 'm-review-2',
        action: 'reject',
        confidence: 0,
        deleted: true,
        content: 'The auth tests need the fake clock',
      },
    });
    await fixture.indexed();
    expect(await stored('m-review-2')).toBeUndefined();
    const partition = (await fixture.events.endOffsets(fixture.codec.topic)).length;
    const tombstones: string[] = [];
    for (let p = 0; p < partition; p += 1) {
      for (const item of await fixture.events.read(fixture.codec, p, 0, 100, {
        tombstones: true,
      })) {
        if (isLoggedTombstone(item)) tombstones.push(item.key);
      }
    }
    expect(tombstones).toEqual(['m-review-2']);

    const after = await runReview(
      backend,
      { kind: 'list', project: PROJECT, status: 'pending' },
      { tenant: TENANT },
    );
    expect(after.stdout).toBe('no pending proposals');
  });

  it('an unknown memory id: not found (exit 3), nothing written', async () => {
    const ends = await fixture.events.endOffsets(fixture.codec.topic);
    const run = await runReview(backend, { kind: 'approve', id: 'm-nope', project: PROJECT }, {});
    expect(run).toEqual({
      stdout: '',
      stderr: 'engram review: no memory m-nope in acme/api',
      exitCode: 3,
    });
    expect(await fixture.events.endOffsets(fixture.codec.topic)).toEqual(ends);
  });
});
