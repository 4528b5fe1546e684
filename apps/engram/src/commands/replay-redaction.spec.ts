import { parseConfig } from '@engram/config';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { secretCorpus } from '../../../../libs/core/src/redaction/secret-corpus';
import { recordedStream } from '../../../../test/integration/support/recorded-sessions';
import { holdsRedactionMarker, secretLeaks } from '../../../../test/support/secret-leaks';
import { startEmbeddedServices } from '../embedded-services';
import { runReplay, serviceGroups } from './replay.command';
import { embeddedTarget } from './replay-targets';

// Issue #19, finding 4: events from `engram replay` (any producer's) were stored raw in the
// input topics, in `*.dlq` and in the services' state (distiller.state.v1's argsJson). Every
// kind of the secret corpus, in every text field of the recorded events and in rejected lines,
// must be absent from every file of the data dir once the services have processed the replay.

const CORPUS = secretCorpus();

describe('engram replay redacts at its entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-replay-redact-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should leave no secret in the event log, the dead letters or the services’ state', async () => {
    const config = parseConfig({});
    const services = await startEmbeddedServices({ config, dataDir: dir, sweepIntervalMs: 100 });
    const stream = recordedStream(2);
    const secret = (i: number) => CORPUS[i % CORPUS.length].text;
    const prompts = stream.prompts.map((e, i) => ({ ...e, text: `${e.text} ${secret(i)}` }));
    const toolCalls = stream.toolCalls.map((e, i) => ({
      ...e,
      command: secret(i + 1),
      argsJson: JSON.stringify({ command: secret(i + 2), env: { API_KEY: secret(i + 3) } }),
      errorMessage: `failed: ${secret(i + 4)}`,
    }));
    const lines = [
      ...prompts.map((e) => JSON.stringify(e)),
      ...toolCalls.map((e) => JSON.stringify(e)),
      ...stream.lifecycle.map((e) => JSON.stringify(e)),
      // Rejected lines are dead-lettered with their raw text.
      ...CORPUS.map((c) =>
        JSON.stringify({ type: 'PromptSubmitted', sessionId: 's', text: c.text }),
      ),
      // (a multi-line secret as its escaped form: one line each)
      ...CORPUS.map((c) => `not json ${c.text.replace(/\n/g, '\\n')}`),
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
        wait: { groups: serviceGroups(config), timeoutMs: 60_000 },
      });
      expect(summary).toMatchObject({ rejected: 2 * CORPUS.length, caughtUp: true });
    } finally {
      await target.close();
      await services.stop();
    }
    expect(secretLeaks(CORPUS, dir, { stderr: reported })).toEqual([]);
    expect(holdsRedactionMarker(dir)).toBe(true);
  }, 120_000);
});
