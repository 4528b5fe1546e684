import { parseConfig } from '@engram/config';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { recordedStream } from '../../../../test/integration/support/recorded-sessions';
import { startEmbeddedServices } from '../embedded-services';
import { runReplay, serviceGroups } from './replay.command';
import { embeddedTarget } from './replay-targets';

describe('engram replay (embedded)', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('should publish every valid line, dead-letter the bad ones and wait until the services are done', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-replay-'));
    dirs.push(dir);
    const config = parseConfig({});
    const services = await startEmbeddedServices({ config, dataDir: dir, sweepIntervalMs: 100 });
    const { log } = services;
    const stream = recordedStream(3);
    const lines = [
      ...stream.prompts.map((e) => JSON.stringify(e)),
      '{"type": "PromptSubmitted", "sessionId": "s"}',
      ...stream.toolCalls.map((e) => JSON.stringify(e)),
      'not json',
      ...stream.lifecycle.map((e) => JSON.stringify(e)),
    ];
    const errors = new PassThrough();
    let reported = '';
    errors.on('data', (chunk: Buffer) => (reported += chunk.toString()));
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({
        config,
        content: lines.join('\n'),
        target,
        errors,
        wait: { groups: serviceGroups(config), timeoutMs: 30_000 },
      });
      const events = stream.prompts.length + stream.toolCalls.length + stream.lifecycle.length;
      expect(summary).toEqual({ published: events, rejected: 2, caughtUp: true });
      expect(reported).toMatch(
        new RegExp(`^line ${stream.prompts.length + 1}: PromptSubmitted`, 'm'),
      );
      expect(reported).toMatch(/^line \d+: not valid JSON/m);

      const boundaries = [...log.replay('memory.episode-boundaries.v1')];
      expect(boundaries.length).toBeGreaterThan(0);
      // Waited for the observer too, down to its project stage: its graph has the sessions.
      const { observer } = services;
      expect(observer.stage.counters.toolCalls).toBe(stream.toolCalls.length);
      expect(observer.promotion.counters.committedWorks).toBe(
        observer.stage.counters.projectWorks + observer.episodeFeed.counters.projectWorks,
      );
      const promptDlq = [...log.replay('agent.prompts.v1.dlq')];
      expect(promptDlq).toHaveLength(1);
      expect(promptDlq[0].headers['engram.error.class']).toBe('ReplayLineError');
      expect([...log.replay('engram.replay.dlq')]).toHaveLength(1);
    } finally {
      await target.close();
      await services.stop();
    }
    // Starts every service and waits for all of them: seconds on a loaded 2-core machine.
  }, 60_000);
});
