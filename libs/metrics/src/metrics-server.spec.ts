import { InvalidEventError } from '@engram/errors';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadLetterReason } from './dead-letter-reason';
import { EngramMetrics } from './engram-metrics';
import { serveMetrics, startMetricsServer, type MetricsServer } from './metrics-server';

describe('metrics server', () => {
  let metrics: EngramMetrics;
  let server: MetricsServer;

  beforeEach(async () => {
    metrics = new EngramMetrics();
    server = await startMetricsServer({ host: '127.0.0.1', port: 0 }, metrics);
  });

  afterEach(async () => {
    await server.stop();
  });

  const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);

  it('should serve the Prometheus text format, with the default process metrics', async () => {
    const response = await get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await response.text()).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('should show a counter once it is incremented', async () => {
    const before = await (await get('/metrics')).text();
    expect(before).not.toMatch(/engram_events_consumed_total\{/);
    metrics.recordConsumed('engram-segmenter', 'agent.prompts.v1', 3);
    metrics.recordDeadLetter(
      'engram-segmenter',
      'agent.prompts.v1',
      new InvalidEventError('no id'),
    );
    const after = await (await get('/metrics')).text();
    expect(after).toContain(
      'engram_events_consumed_total{group="engram-segmenter",topic="agent.prompts.v1"} 3',
    );
    expect(after).toContain(
      'engram_dead_letters_total{group="engram-segmenter",topic="agent.prompts.v1",reason="invalid_event"} 1',
    );
  });

  it('should show stage batch and recall latencies, and the lag of pushed and watched partitions', async () => {
    metrics.startBatch('g', 't')();
    await metrics.timeRecall(() => Promise.resolve('answer'));
    await expect(metrics.timeRecall(() => Promise.reject(new Error('down')))).rejects.toThrow();
    metrics.recordLag({ group: 'g', topic: 't', partition: 0, lag: 7 });
    const stop = metrics.watchLag(() => [{ group: 'g', topic: 'u', partition: 2, lag: 4 }]);
    let text = await (await get('/metrics')).text();
    expect(text).toContain('engram_stage_batch_duration_seconds_count{group="g",topic="t"} 1');
    expect(text).toContain('engram_recall_duration_seconds_count{outcome="ok"} 1');
    expect(text).toContain('engram_recall_duration_seconds_count{outcome="error"} 1');
    expect(text).toContain('engram_consumer_lag{group="g",topic="t",partition="0"} 7');
    expect(text).toContain('engram_consumer_lag{group="g",topic="u",partition="2"} 4');
    stop();
    text = await (await get('/metrics')).text();
    expect(text).not.toContain('topic="u"');
  });

  it('should be live while the process runs', async () => {
    const response = await get('/healthz');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('should be ready only while every readiness check passes, naming those that fail', async () => {
    let joined = false;
    metrics.readiness.add('event log', () => true);
    const remove = metrics.readiness.add('consumer engram-segmenter', () => joined);
    let response = await get('/readyz');
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({
      ready: false,
      failing: ['consumer engram-segmenter'],
    });
    joined = true;
    response = await get('/readyz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ready: true, failing: [] });
    joined = false;
    remove();
    expect((await get('/readyz')).status).toBe(200);
  });

  it('should count a check that throws as failing', async () => {
    metrics.readiness.add('graph', () => {
      throw new Error('closed');
    });
    expect(await (await get('/readyz')).json()).toEqual({
      ready: false,
      failing: ['graph: closed'],
    });
  });

  it('should answer 404 elsewhere and 405 to anything but GET', async () => {
    expect((await get('/')).status).toBe(404);
    expect((await get('/metrics', { method: 'POST' })).status).toBe(405);
  });
});

describe('serveMetrics', () => {
  it('should serve nothing when metrics are off', async () => {
    expect(await serveMetrics(null)).toBeNull();
  });

  it('should log the fix and go on without metrics when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const logger = { log: vi.fn(), error: vi.fn() };
    try {
      expect(await serveMetrics({ host: '127.0.0.1', port }, logger)).toBeNull();
    } finally {
      taken.close();
    }
    expect(logger.error).toHaveBeenCalledWith(expect.stringMatching(/ENGRAM_METRICS_PORT/));
  });
});

describe('deadLetterReason', () => {
  it('should name the kind of failure, never its message', () => {
    expect(deadLetterReason(new InvalidEventError('tenant acme: text too long'))).toBe(
      'invalid_event',
    );
    expect(deadLetterReason(new TypeError('x is undefined'))).toBe('programmer_error');
    expect(deadLetterReason(new Error('socket hang up'))).toBe('unclassified');
  });
});
