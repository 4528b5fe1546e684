import { describe, expect, it } from 'vitest';
import { EmbeddingServiceError } from './errors';
import { parseEmbeddingsReply } from './openai-wire';

describe('parseEmbeddingsReply', () => {
  it('should order the vectors by index', () => {
    const reply = {
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: [0, 1] },
        { object: 'embedding', index: 0, embedding: [1, 0] },
      ],
      model: 'm',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    };
    expect(parseEmbeddingsReply(reply, 2)).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it('should take items without an index in position', () => {
    expect(parseEmbeddingsReply({ data: [{ embedding: [1] }, { embedding: [2] }] }, 2)).toEqual([
      [1],
      [2],
    ]);
  });

  it.each([
    ['no data', {}, /no "data" array/],
    ['too few items', { data: [{ index: 0, embedding: [1] }] }, /1 embeddings for 2 inputs/],
    [
      'a repeated index',
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [2] },
        ],
      },
      /index 0 appears twice/,
    ],
    [
      'a non-numeric value',
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 1, embedding: ['x'] },
        ],
      },
      /not a finite number/,
    ],
    [
      'a base64 embedding',
      {
        data: [
          { index: 0, embedding: 'AAAA' },
          { index: 1, embedding: [1] },
        ],
      },
      /not a non-empty array/,
    ],
  ])('should reject a reply with %s', (_label, reply, message) => {
    expect(() => parseEmbeddingsReply(reply, 2)).toThrow(EmbeddingServiceError);
    expect(() => parseEmbeddingsReply(reply, 2)).toThrow(message);
  });
});
