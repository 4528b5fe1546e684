import { MisconfigurationError } from '@engram/core';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SEGMENT_MODE, resolveSegmentMode, type EmbedBatch } from './segment.command';

function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const embed: EmbedBatch = (texts) => Promise.resolve(texts.map(() => [1, 0]));
const missingModel = (): Promise<EmbedBatch | undefined> =>
  Promise.reject(
    new MisconfigurationError('MiniLM model not found in /nowhere; run `npm run models:setup`', {}),
  );

describe('resolveSegmentMode', () => {
  it('should default to hybrid with the embedder', async () => {
    const errors = sink();
    const resolved = await resolveSegmentMode(
      undefined,
      () => Promise.resolve(embed),
      errors.stream,
    );
    expect(DEFAULT_SEGMENT_MODE).toBe('hybrid');
    expect(resolved).toEqual({ mode: 'hybrid', embed });
    expect(errors.text()).toBe('');
  });

  it("should keep hybrid's lexical rule, saying so on stderr, when the default has no model", async () => {
    const errors = sink();
    const resolved = await resolveSegmentMode(undefined, missingModel, errors.stream);
    expect(resolved).toEqual({ mode: 'hybrid', embed: undefined });
    expect(errors.text()).toContain('decides on keywords, episode length and gaps alone');
    expect(errors.text()).toContain('MiniLM model not found in /nowhere');
    expect(errors.text().trimEnd().split('\n')).toHaveLength(1);
  });

  it('should fail when hybrid was asked for explicitly and the model is missing', async () => {
    await expect(resolveSegmentMode('hybrid', missingModel, sink().stream)).rejects.toThrow(
      'MiniLM model not found',
    );
  });

  it('should not load the model for an explicit keyword mode', async () => {
    const asked: string[] = [];
    const resolved = await resolveSegmentMode(
      'keyword',
      (mode) => {
        asked.push(mode);
        return Promise.resolve(undefined);
      },
      sink().stream,
    );
    expect(resolved).toEqual({ mode: 'keyword', embed: undefined });
    expect(asked).toEqual(['keyword']);
  });
});
