import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DLQ_HEADERS,
  DownstreamUnavailableError,
  type Delivered,
  type ExactlyOnceStage,
  type TopicCodec,
} from '@engram/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedExactlyOnceProcessor } from './embedded-exactly-once-processor';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteEventLogAdapter } from './sqlite-event-log.adapter';
import { crashCodec, upperCaseStage } from './testing/processor-child';
import { tsNodeArgs } from './testing/ts-child';

interface ScratchEvent {
  eventId: string;
  sessionId: string;
  text: string;
}

const SCHEMA = {
  type: 'record',
  name: 'ScratchEvent',
  namespace: 'engram.test',
  fields: [
    { name: 'eventId', type: 'string' },
    { name: 'sessionId', type: 'string' },
    { name: 'text', type: 'string' },
  ],
};

function scratchCodec(topic: string): TopicCodec<ScratchEvent> {
  return {
    topic,
    subject: `${topic}-value`,
    schema: SCHEMA,
    toAvro: (event) => event,
    fromAvro: (value) => value as ScratchEvent,
    key: (event) => event.sessionId,
    validate: (event) => (event.eventId.length === 0 ? ['eventId is empty'] : []),
  };
}

const inputs = (count: number): ScratchEvent[] =>
  Array.from({ length: count }, (_, n) => ({
    eventId: `e${n}`,
    sessionId: `session-${n % 4}`,
    text: `event ${n}`,
  }));

const upper = (items: Delivered<ScratchEvent>[]) =>
  items.map((i) => ({ ...i.event, text: i.event.text.toUpperCase() }));

async function until(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('EmbeddedExactlyOnceProcessor', () => {
  let dir: string;
  let log: SqliteEventLog;
  let adapter: SqliteEventLogAdapter;
  const input = scratchCodec('in');
  const output = scratchCodec('out');
  const RETRY = { initialMs: 5, maxMs: 20 };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-eos-'));
    log = SqliteEventLog.open({ dataDir: dir });
    adapter = new SqliteEventLogAdapter(log);
    await adapter.ensureTopic({ topic: input.topic, partitions: 2 });
    await adapter.ensureTopic({ topic: output.topic, partitions: 2 });
  });

  const started: EmbeddedExactlyOnceProcessor[] = [];

  afterEach(async () => {
    await Promise.all(started.splice(0).map((p) => p.stop()));
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const all = (topic: string) => [...log.replay(topic)];
  const texts = (topic: string) =>
    all(topic)
      .map((r) => (JSON.parse(String(r.value)) as ScratchEvent).text)
      .sort();
  const committedAll = (group: string) => {
    const committed = log.committedOffsets(group, input.topic);
    return log.endOffsets(input.topic).every((end, p) => (committed.get(p) ?? 0) === end);
  };
  const track = (eos: EmbeddedExactlyOnceProcessor) => {
    started.push(eos);
    return eos;
  };
  const processor = (stage: ExactlyOnceStage<ScratchEvent>, groupId = 'g') =>
    track(
      new EmbeddedExactlyOnceProcessor(log, { groupId, service: 'test', retry: RETRY }).subscribe(
        input,
        stage,
      ),
    );

  it('should redo a batch whose transform threw, with outputs and offsets committed once', async () => {
    const published = inputs(20);
    await adapter.publish(input, published);
    let calls = 0;
    let aborts = 0;
    let commits = 0;
    const stage: ExactlyOnceStage<ScratchEvent> = {
      transform: (items) => {
        calls += 1;
        if (calls === 1) throw new DownstreamUnavailableError('index is down');
        return [{ codec: output, events: upper(items) }];
      },
      onAborted: () => (aborts += 1),
      onCommitted: () => (commits += 1),
    };
    const eos = processor(stage);
    await eos.start();
    await until(() => committedAll('g'));
    await eos.stop();

    expect(aborts).toBe(1);
    expect(commits).toBe(2);
    expect(eos.counters).toMatchObject({ processed: 20, deadLettered: 0, retries: 1 });
    expect(texts(output.topic)).toEqual(published.map((e) => e.text.toUpperCase()).sort());
  });

  it('should roll back outputs already appended when the same transaction fails later', async () => {
    const published = inputs(6);
    await adapter.publish(input, published, { partition: 0 });
    const stage: ExactlyOnceStage<ScratchEvent> = {
      // "event 3" makes the stage also write to a partition that does not exist: the append
      // of the good outputs happened inside the transaction, and must vanish with it.
      transform: (items) => [
        { codec: output, events: upper(items) },
        {
          topic: output.topic,
          messages: items.some((i) => i.event.text === 'event 3')
            ? [{ key: 'x', value: 'bad', partition: 9 }]
            : [],
        },
      ],
    };
    const eos = processor(stage);
    await eos.start();
    await until(() => committedAll('g'));
    await eos.stop();

    // The batch failed for good, was split, and only "event 3" went to the DLQ.
    expect(texts(output.topic)).toEqual(
      published.filter((e) => e.text !== 'event 3').map((e) => e.text.toUpperCase()),
    );
    const [dead] = all('in.dlq');
    expect(JSON.parse(String(dead.value))).toEqual(published[3]);
    expect(dead.headers[DLQ_HEADERS.errorClass]).toBe('RangeError');
    expect(dead.headers[DLQ_HEADERS.sourceOffset]).toBe('3');
    expect(eos.counters).toMatchObject({ processed: 5, deadLettered: 1 });
  });

  it('should send poison records to the DLQ with headers and go on with the next good one', async () => {
    const [first, second] = inputs(2);
    log.append(input.topic, [
      { key: 's', value: JSON.stringify(first), partition: 1 },
      { key: 's', value: '{"eventId": "e1", "sessionId": ', partition: 1 },
      { key: 's', value: JSON.stringify({ ...first, eventId: '' }), partition: 1 },
      { key: 's', value: JSON.stringify({ ...first, text: 5 }), partition: 1 },
      { key: 's', value: '[1, 2]', partition: 1 },
      { key: 's', value: JSON.stringify(second), partition: 1 },
    ]);
    const eos = processor({ transform: (items) => [{ codec: output, events: upper(items) }] });
    await eos.start();
    await until(() => committedAll('g'));
    await eos.stop();

    expect(texts(output.topic)).toEqual(['EVENT 0', 'EVENT 1']);
    const dead = all('in.dlq');
    expect(dead.map((r) => r.headers[DLQ_HEADERS.errorClass])).toEqual([
      'DecodeError',
      'InvalidEventError',
      'DecodeError',
      'DecodeError',
    ]);
    expect(dead.map((r) => r.headers[DLQ_HEADERS.sourceOffset])).toEqual(['1', '2', '3', '4']);
    expect(dead[0]).toMatchObject({
      key: 's',
      value: '{"eventId": "e1", "sessionId": ',
      headers: {
        [DLQ_HEADERS.sourceTopic]: 'in',
        [DLQ_HEADERS.sourcePartition]: '1',
        [DLQ_HEADERS.service]: 'test',
      },
    });
    expect(dead[0].headers[DLQ_HEADERS.errorMessage]).toMatch(/not JSON/);
    expect(dead[1].headers[DLQ_HEADERS.errorMessage]).toMatch(/eventId is empty/);
    expect(dead[2].headers[DLQ_HEADERS.errorMessage]).toMatch(/schema at text/);
    expect(Date.parse(String(dead[0].headers[DLQ_HEADERS.time]))).not.toBeNaN();
    expect(eos.counters).toMatchObject({ processed: 2, deadLettered: 4 });
  });

  it('should resume after the committed offsets when restarted, processing nothing twice', async () => {
    const published = inputs(12);
    await adapter.publish(input, published.slice(0, 8));
    const stage: ExactlyOnceStage<ScratchEvent> = {
      transform: (items) => [{ codec: output, events: upper(items) }],
    };
    const first = processor(stage);
    const assignments: Record<string, number[]>[] = [];
    await first.start();
    await until(() => committedAll('g'));
    await first.stop();

    await adapter.publish(input, published.slice(8));
    const second = track(
      new EmbeddedExactlyOnceProcessor(log, {
        groupId: 'g',
        service: 'test',
        retry: RETRY,
        onAssignment: (assignment) => assignments.push(assignment),
      }).subscribe(input, stage),
    );
    await second.start();
    await until(() => committedAll('g'));
    await second.stop();

    expect(assignments).toEqual([{ in: [0, 1] }]);
    expect(second.counters.processed).toBe(4);
    expect(texts(output.topic)).toEqual(published.map((e) => e.text.toUpperCase()).sort());
  });

  it('should drain the batch in flight on stop, committing it', async () => {
    await adapter.publish(input, inputs(3), { partition: 0 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const eos = processor({
      transform: async (items) => {
        entered = true;
        await gate;
        return [{ codec: output, events: upper(items) }];
      },
    });
    await eos.start();
    await until(() => entered);
    const stopped = eos.stop();
    release();
    await stopped;

    expect(texts(output.topic)).toEqual(['EVENT 0', 'EVENT 1', 'EVENT 2']);
    expect(log.committedOffsets('g', input.topic).get(0)).toBe(3);
  });

  it('should commit or abort timer outputs in their own transaction', async () => {
    const eos = processor({ transform: () => [] });
    await eos.start();
    const events: string[] = [];
    await eos.produceTransactionally(() => [{ codec: output, events: inputs(2) }], {
      onCommitted: () => events.push('committed'),
      onAborted: () => events.push('aborted'),
    });
    await expect(
      eos.produceTransactionally(
        () => [
          { codec: output, events: inputs(1) },
          { codec: output, events: [{ eventId: '', sessionId: 's', text: 'bad' }] },
        ],
        { onAborted: () => events.push('aborted') },
      ),
    ).rejects.toThrow(/eventId is empty/);
    await eos.stop();

    expect(events).toEqual(['committed', 'aborted']);
    expect(texts(output.topic)).toEqual(['event 0', 'event 1']);
    await expect(eos.produceTransactionally(() => [])).rejects.toThrow(/not started/);
  });

  it('should refuse to start on a topic that does not exist', async () => {
    const eos = new EmbeddedExactlyOnceProcessor(log, {
      groupId: 'g',
      service: 'test',
      retry: RETRY,
    }).subscribe(scratchCodec('missing'), { transform: () => [] });
    await expect(eos.start()).rejects.toThrow(/does not exist/);
  });

  it('should neither lose nor duplicate outputs when the processing process is SIGKILLed', async () => {
    const published = inputs(300);
    await adapter.publish(crashCodec('in'), published);
    const child = spawn(process.execPath, tsNodeArgs(dir, 'processor-child.ts', [dir]), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let commits = 0;
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      // Bounded below the test's timeout, so a stuck child says where it stood.
      const stuck = setTimeout(() => {
        child.removeAllListeners('exit');
        child.kill('SIGKILL');
        reject(
          new Error(
            `child made ${commits} commits in 120 s; stderr: ${stderr}; stdout: ${stdout.slice(-2_000)}`,
          ),
        );
      }, 120_000);
      child.on('exit', (code) => {
        clearTimeout(stuck);
        reject(new Error(`child exited early (${code}): ${stderr}`));
      });
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        commits += chunk.toString().split('\n').length - 1;
        if (commits >= 15) {
          clearTimeout(stuck);
          child.removeAllListeners('exit');
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((resolve) => child.once('exit', resolve));
    const beforeRestart = log.endOffsets(output.topic).reduce((sum, end) => sum + end, 0);

    const eos = track(
      new EmbeddedExactlyOnceProcessor(log, {
        groupId: 'crash',
        service: 'crash-test',
        retry: RETRY,
      }).subscribe(crashCodec('in'), upperCaseStage()),
    );
    await eos.start();
    await until(() => {
      const committed = log.committedOffsets('crash', input.topic);
      return log.endOffsets(input.topic).every((end, p) => (committed.get(p) ?? 0) === end);
    });
    await eos.stop();

    expect(beforeRestart).toBeGreaterThan(0);
    expect(beforeRestart).toBeLessThan(published.length);
    const ids = all(output.topic).map((r) => (JSON.parse(String(r.value)) as ScratchEvent).eventId);
    expect(ids.sort()).toEqual(published.map((e) => e.eventId).sort());
  }, 180_000); // the child compiles its TypeScript on start: slow on a busy machine
});
