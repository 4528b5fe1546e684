// Issue #19: `engram start` (embedded) serves /metrics, /healthz and /readyz; the embedded
// processors record what they consume and dead-letter. Real HTTP on a free loopback port.
import { parseConfig } from '@engram/config';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { prefixedTopics, segmenterCodecs } from '@engram/app-segmenter';
import { recordedStream } from '../../../test/integration/support/recorded-sessions';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';

const PROMPTS = 'agent.prompts.v1';

describe('metrics and health of the embedded services', () => {
  let dir: string;
  let services: EmbeddedServices;
  let url: string;

  const scrape = async () => (await fetch(`${url}/metrics`)).text();
  /** Scrapes until `done` holds for the scrape (20 s at most); returns the last scrape. */
  const scrapeUntil = async (done: (text: string) => boolean) => {
    const deadline = Date.now() + 20_000;
    let text = await scrape();
    while (!done(text) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      text = await scrape();
    }
    return text;
  };
  /** The value of one sample line of the scrape, 0 when absent. */
  const sample = (text: string, series: string) =>
    Number(
      text
        .split('\n')
        .find((line) => line.startsWith(`${series} `))
        ?.split(' ')[1] ?? 0,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-embedded-metrics-'));
    const config = parseConfig({});
    services = await startEmbeddedServices({
      config,
      dataDir: join(dir, 'data'),
      sweepIntervalMs: 50,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
      metrics: { host: '127.0.0.1', port: 0 },
    });
    url = services.metrics!.url;
  }, 60_000);

  afterAll(async () => {
    await services?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should be live and ready once the log is open and every consumer runs', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, failing: [] });
  });

  it('should count the events consumed and the dead letters written per topic', async () => {
    const stream = recordedStream(3);
    const codecs = segmenterCodecs(prefixedTopics(''));
    await new SqliteEventLogAdapter(services.log).publish(codecs.prompts, stream.prompts);
    services.log.append(PROMPTS, [{ key: 'poison', value: Buffer.from('not json') }]);
    const consumed = `engram_events_consumed_total{group="engram-segmenter",topic="${PROMPTS}"}`;
    const text = await scrapeUntil((t) => sample(t, consumed) >= stream.prompts.length);
    expect(sample(text, consumed)).toBe(stream.prompts.length);
    expect(
      sample(
        text,
        `engram_dead_letters_total{group="engram-segmenter",topic="${PROMPTS}",reason="decode_error"}`,
      ),
    ).toBe(1);
    expect(text).toMatch(
      /^engram_stage_batch_duration_seconds_count\{group="engram-segmenter",topic="agent\.prompts\.v1"\} [1-9]/m,
    );
    expect(text).toMatch(
      /^engram_consumer_lag\{group="engram-segmenter",topic="agent\.prompts\.v1",partition="0"\} \d+$/m,
    );
    expect(text).toMatch(/^process_resident_memory_bytes /m);
  });
});
