import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressBar } from './progress';

/** A non-terminal stream (a CI log) that keeps what was written. */
function logStream() {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('progressBar', () => {
  it('should write a plain line now and then, with rate and time left, when not a terminal', () => {
    const log = logStream();
    let clock = 0;
    const bar = progressBar('replay', {
      unit: 'events',
      stream: log.stream,
      lineIntervalMs: 5_000,
      now: () => clock,
    });
    bar.total(1_000);
    for (let i = 0; i < 10; i++) {
      clock += 1_000;
      bar.advance(50);
    }
    bar.stop();
    expect(log.text().split('\n').filter(Boolean)).toEqual([
      'replay: 250/1000 events, 50/s, about 15 s left',
      'replay: 500/1000 events, 50/s, about 10 s left',
      'replay: 500/1000 events, 50/s, about 10 s left',
    ]);
  });

  it('should write nothing for a run shorter than one interval', () => {
    const log = logStream();
    let clock = 0;
    const bar = progressBar('import', { unit: 'files', stream: log.stream, now: () => clock });
    bar.total(3);
    clock += 1_000;
    bar.advance(3);
    bar.stop();
    expect(log.text()).toBe('');
  });

  it('should write nothing when disabled (--json)', () => {
    const log = logStream();
    const bar = progressBar('replay', { unit: 'events', stream: log.stream, enabled: false });
    bar.total(10);
    bar.advance(10);
    bar.stop();
    expect(log.text()).toBe('');
  });
});
