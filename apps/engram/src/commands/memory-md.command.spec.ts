// `engram memory-md` on a temp SQLite log: the latest version of each memory, one project's
// curated ones, rendered as MEMORY.md; which project and tenant, asked for when ambiguous.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Memory, Typed } from '@engram/contracts';
import { applyReviewAction, reflectExtractively } from '@engram/core';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../../libs/core/src/distillation/testing/reflector-fixtures';
import { distillerCodecs, DEFAULT_DISTILLER_TOPICS } from '@engram/app-distiller';
import { memoryMdReport } from './memory-md.command';

const CODEC = distillerCodecs(DEFAULT_DISTILLER_TOPICS).memories;

/** User-verified memories of a project: its reflector proposals, approved. */
function approvedMemories(tenantId: string, projectId: string): Memory[] {
  const { proposals } = reflectExtractively({
    tenantId,
    projectId,
    now: REFLECT_AT,
    distillations: weekOfDistillations(),
  });
  return proposals.slice(0, 3).map((p) => {
    const outcome = applyReviewAction(p, { kind: 'approve', at: REFLECT_AT + 1, by: 'tim' });
    if (!outcome.ok || outcome.promoted === null) throw new Error('not approved');
    return outcome.promoted;
  });
}

describe('engram memory-md', () => {
  let dir: string;
  let log: SqliteEventLog;
  let port: SqliteEventLogAdapter;
  const publish = (memories: Memory[]) =>
    port.publish(
      CODEC,
      memories.map((m): Typed<'Memory'> => ({ type: 'Memory', ...m })),
    );

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-memory-md-'));
    log = SqliteEventLog.open({ dataDir: dir });
    log.ensureTopic(CODEC.topic, 3, { compacted: true });
    port = new SqliteEventLogAdapter(log);
  });

  afterEach(() => {
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("should render the only project's curated memories by section, the latest version of each", async () => {
    const memories = approvedMemories('acme', 'acme/api');
    await publish(memories);
    // A later version of one memory (its text corrected) replaces the first.
    await publish([
      {
        ...memories[0],
        eventId: 'later',
        timestamp: memories[0].timestamp + 1,
        content: 'Small commits.',
      },
    ]);
    const report = await memoryMdReport(port, CODEC, {});
    expect(report).toMatchObject({ tenant: 'acme', project: 'acme/api', memories: 3 });
    expect(report.markdown).toBe(
      [
        '# MEMORY — acme/api',
        '',
        '_Curated by Engram: 3 memories, last updated 2026-02-17._',
        '',
        '## User',
        '',
        '- (2026-02-17) Small commits.',
        '',
        '## Hard Rules',
        '',
        '- (2026-02-17) Never commit the .env file.',
        '- (2026-02-17) Always run the auth tests with --no-file-parallelism, they share the clock.',
        '',
        '## System Architecture',
        '',
        '_Nothing yet._',
        '',
        '## Patterns',
        '',
        '_Nothing yet._',
        '',
      ].join('\n'),
    );
  });

  it('should leave out a memory a tombstone deleted (Feedback DELETE), and one published again after', async () => {
    const memories = approvedMemories('acme', 'acme/api');
    await publish(memories);
    await port.publishTombstones(CODEC.topic, [memories[0].memoryId, memories[1].memoryId]);
    await publish([{ ...memories[1], eventId: 'again', timestamp: memories[1].timestamp + 1 }]);
    const report = await memoryMdReport(port, CODEC, {});
    expect(report.memories).toBe(2);
    expect(report.markdown).not.toContain(memories[0].content);
    expect(report.markdown).toContain(memories[1].content);
  });

  it('should ask for --project and --tenant when several would fit', async () => {
    await publish([
      ...approvedMemories('acme', 'acme/api'),
      ...approvedMemories('acme', 'acme/web'),
    ]);
    await expect(memoryMdReport(port, CODEC, {})).rejects.toThrow(
      'several projects have memories (acme/api, acme/web): pass --project',
    );
    await publish(approvedMemories('globex', 'acme/web'));
    await expect(memoryMdReport(port, CODEC, { project: 'acme/web' })).rejects.toThrow(
      /several tenants .*pass --tenant/,
    );
    const web = await memoryMdReport(port, CODEC, { project: 'acme/web', tenant: 'globex' });
    expect(web).toMatchObject({ tenant: 'globex', project: 'acme/web', memories: 3 });
  });
});
