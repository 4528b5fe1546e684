import { parseConfig } from '@engram/config';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ADVERSARIAL_SHAPES } from '../../../../libs/core/src/testing/adversarial-text';
import { recordedStream } from '../../../../test/integration/support/recorded-sessions';
import { startEmbeddedServices } from '../embedded-services';
import { runReplay, serviceGroups } from './replay.command';
import { embeddedTarget } from './replay-targets';

// Issue #19, finding 2: one ToolCallObserved with a 5 MB errorMessage froze the whole embedded
// process (the observer's error normalisation was quadratic) and froze it again after a
// restart. Failed tool calls with 5 MB messages and commands of the shapes that were quadratic,
// and a prompt of one 5 MB token, replayed into embedded mode: every service gets through them.
// Replay caps every text field at its entry (text-caps.ts), so the 5 MB prompt is kept, cut,
// instead of being dead-lettered, and no 5 MB field reaches any store.

const FIVE_MB = 5 * 1024 * 1024;

describe('poison pills: 5 MB fields through every embedded service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-poison-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should process them all and catch up', async () => {
    const config = parseConfig({});
    const services = await startEmbeddedServices({ config, dataDir: dir, sweepIntervalMs: 100 });
    const stream = recordedStream(1);
    const shapes = ['dashed', 'dotted', 'word', 'path'];
    const toolCalls = stream.toolCalls.map((event, i) =>
      i < shapes.length
        ? {
            ...event,
            outcome: 'error' as const,
            errorMessage: ADVERSARIAL_SHAPES[shapes[i]](FIVE_MB),
            command: ADVERSARIAL_SHAPES[shapes[(i + 1) % shapes.length]](FIVE_MB / 5),
          }
        : event,
    );
    const prompts = stream.prompts.map((event, i) =>
      i === 1 ? { ...event, text: ADVERSARIAL_SHAPES.hex(FIVE_MB) } : event,
    );
    const lines = [...prompts, ...toolCalls, ...stream.lifecycle].map((e) => JSON.stringify(e));
    const target = await embeddedTarget(config, dir);
    const started = Date.now();
    try {
      const summary = await runReplay({
        config,
        content: lines.join('\n'),
        target,
        errors: new PassThrough(),
        wait: { groups: serviceGroups(config), timeoutMs: 90_000 },
      });
      expect(summary).toMatchObject({ rejected: 0, caughtUp: true, deadLettered: [] });
      expect(summary.published + summary.rejected).toBe(lines.length);
    } finally {
      await target.close();
      await services.stop();
    }
    // 4 tool calls × (5 MB + 1 MB) and a 5 MB prompt went in; at most a few caps of each are kept.
    expect(dataDirBytes(dir)).toBeLessThan(FIVE_MB);
    // Reported, not asserted: the figure for the issue.
    console.log(`5 MB poison pills: replayed and processed in ${Date.now() - started} ms`);
  }, 180_000);
});

function dataDirBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => statSync(join(dir, name)))
    .filter((stat) => stat.isFile())
    .reduce((sum, stat) => sum + stat.size, 0);
}
