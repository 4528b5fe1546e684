import { parseConfig } from '@engram/config';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { recordedStream } from '../../../../test/integration/support/recorded-sessions';
import { startEmbeddedServices } from '../embedded-services';
import { fileLines, REPLAY_EXIT, replayExitCode, runReplay, serviceGroups } from './replay.command';
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
      expect(summary).toEqual({
        published: events,
        rejected: 2,
        caughtUp: true,
        deadLettered: [],
      });
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

  it('should report what the services dead-lettered during --wait, and exit 5 for it', async () => {
    // Issue 19 finding 5: replay --wait printed "every event processed" and exited 0 when the
    // segmenter had dead-lettered a 10 MB turn.
    const dir = mkdtempSync(join(tmpdir(), 'engram-replay-'));
    dirs.push(dir);
    // Replay caps a prompt at 65,536 characters (text-caps.ts); a segmenter configured for less
    // still rejects a prompt between its limit and the cap.
    const base = parseConfig({});
    const segmenter = {
      ...base.segmenter,
      settings: { ...base.segmenter.settings, maxPromptChars: 10_000 },
    };
    const config = { ...base, segmenter };
    const services = await startEmbeddedServices({ config, dataDir: dir, sweepIntervalMs: 100 });
    const stream = recordedStream(1);
    const [first] = stream.prompts;
    const huge = { ...first, eventId: 'huge-1', promptId: first.promptId + 1000 };
    const file = join(dir, 'events.jsonl');
    writeFileSync(
      file,
      [
        ...stream.prompts.map((e) => JSON.stringify(e)),
        JSON.stringify({ ...huge, text: 'y'.repeat(20_000) }),
      ].join('\n'),
    );
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({
        config,
        file,
        target,
        errors: new PassThrough(),
        wait: { groups: serviceGroups(config), timeoutMs: 30_000 },
      });
      expect(summary.caughtUp).toBe(true);
      expect(summary.deadLettered).toEqual([
        {
          topic: 'agent.prompts.v1.dlq',
          errorClass: 'InvalidEventError',
          count: 1,
          example: expect.stringMatching(/over the limit/) as string,
        },
      ]);
      expect(replayExitCode(summary)).toBe(REPLAY_EXIT.deadLettered);
    } finally {
      await target.close();
      await services.stop();
    }
  }, 60_000);

  it('should accept a BOM on line 1 and report invalid UTF-8 with its line, streaming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-replay-'));
    dirs.push(dir);
    const config = parseConfig({});
    const stream = recordedStream(1);
    const [a, b] = stream.prompts;
    // Line 2 holds a lone 0xE9 byte (Latin-1 "é"), which is not UTF-8.
    const second = JSON.stringify({ ...b, text: 'cafX' });
    const cut = second.indexOf('cafX') + 3;
    const file = join(dir, 'events.jsonl');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(`\uFEFF${JSON.stringify(a)}\r\n${second.slice(0, cut)}`),
        Buffer.from([0xe9]),
        Buffer.from(`${second.slice(cut + 1)}\n`),
      ]),
    );
    const errors = new PassThrough();
    let reported = '';
    errors.on('data', (chunk: Buffer) => (reported += chunk.toString()));
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({ config, file, target, errors });
      expect(summary).toMatchObject({ published: 1, rejected: 1 });
      expect(reported).toMatch(/^line 2: not valid UTF-8 \(first bad byte at column \d+\)$/m);
      expect(reported).not.toMatch(/line 1/);
    } finally {
      await target.close();
    }
  });

  it('should wait on a fresh data dir without engram start instead of failing on a missing topic', async () => {
    // Before: "topic observer.project-work.v1 does not exist; create it with ensureTopic".
    const dir = mkdtempSync(join(tmpdir(), 'engram-replay-'));
    dirs.push(dir);
    const config = parseConfig({});
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({
        config,
        content: JSON.stringify(recordedStream(1).prompts[0]),
        target,
        errors: new PassThrough(),
        wait: { groups: serviceGroups(config), timeoutMs: 300 },
      });
      expect(summary).toMatchObject({ published: 1, caughtUp: false });
      expect(replayExitCode(summary)).toBe(REPLAY_EXIT.timedOut);
    } finally {
      await target.close();
    }
  });
});

describe('fileLines', () => {
  it('should split lines across chunk boundaries and keep lines longer than a chunk whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-lines-'));
    try {
      const long = 'z'.repeat(200_000);
      const file = join(dir, 'f');
      writeFileSync(file, `a\n${long}\n\nlast`);
      const lines: [number, string][] = [];
      for await (const { line, bytes } of fileLines(file)) lines.push([line, bytes.toString()]);
      expect(lines).toEqual([
        [1, 'a'],
        [2, long],
        [3, ''],
        [4, 'last'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
