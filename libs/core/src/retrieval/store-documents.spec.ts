import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { InvalidEventError } from '../errors/engram-error';
import { modelVector } from './model-vector';
import { describe, expect, it } from 'vitest';
import { EVENT_FIXTURES } from '../../../contracts/src/testing/event-fixtures';
import {
  documentId,
  episodeDocument,
  episodeText,
  memoryDocument,
  memoryText,
  packVector,
  turnDocument,
  unpackVector,
  vectorToJson,
  withEmbedding,
  withUnpackedVector,
} from './store-documents';

const memory = (overrides: Partial<Memory> = {}): Memory => ({
  ...EVENT_FIXTURES.Memory,
  ...overrides,
});
const episode = (overrides: Partial<Episode> = {}): Episode => ({
  ...EVENT_FIXTURES.Episode,
  ...overrides,
});
const prompt = (overrides: Partial<PromptSubmitted> = {}): PromptSubmitted => ({
  ...EVENT_FIXTURES.PromptSubmitted,
  ...overrides,
});

// A made-up key of a well-known shape (never a real credential).
const SECRET = 'AKIAIOSFODNN7EXAMPLE';

describe('memoryDocument', () => {
  it('should keep the record field for field under its memoryId, with text and provenance', () => {
    const { id, body } = memoryDocument(memory());
    const { embedding: _e, embeddingModel: _m, ...record } = EVENT_FIXTURES.Memory;
    expect(id).toBe(EVENT_FIXTURES.Memory.memoryId);
    expect(body).toMatchObject(record);
    expect(body.provenance).toEqual({
      tenantId: 'acme',
      projectId: 'acme/api',
      sessionIds: ['session-1', 'session-2'],
      episodeIds: ['0d4f6a52-7c1e-5b5e-8f0a-1c2d3e4f5a6b'],
      promptIds: [],
      eventIds: ['6f1c1c2e-4a57-4f0a-9a51-1e0b1f9b7c01'],
      memoryId: '3b9d2f0e-1a2b-5c3d-9e4f-5a6b7c8d9e0f',
      commitSha: 'a1b2c3d4e5f6',
    });
  });

  it("should drop the producer's vector: the index stores only the vector it computed", () => {
    const { body } = memoryDocument(memory());
    expect(body).toMatchObject({ embedding: null, embeddingModel: null, embeddingDims: null });
  });

  it('should drop the record-name tag the contract codecs add (it is not a field)', () => {
    const tagged = { type: 'Memory' as const, ...memory() };
    expect(memoryDocument(tagged)).toEqual(memoryDocument(memory()));
    expect(memoryDocument(tagged).body).not.toHaveProperty('type');
    const episodeTagged = { type: 'Episode' as const, ...episode() };
    expect(episodeDocument(episodeTagged).body).not.toHaveProperty('type');
    const promptTagged = { type: 'PromptSubmitted' as const, ...prompt() };
    expect(turnDocument(promptTagged)!.body).not.toHaveProperty('type');
  });

  it('should be deterministic (a replay rebuilds the same document)', () => {
    expect(memoryDocument(memory())).toEqual(memoryDocument(memory()));
  });

  it('should refuse an empty or over-long id, naming the field', () => {
    expect(() => memoryDocument(memory({ memoryId: ' ' }))).toThrow(InvalidEventError);
    expect(() => memoryDocument(memory({ memoryId: 'x'.repeat(513) }))).toThrow(/memoryId/);
    expect(documentId('x'.repeat(512), 'memoryId')).toHaveLength(512);
  });
});

describe('memoryText', () => {
  it('should be the content alone for a plain memory', () => {
    expect(
      memoryText(memory({ content: '  Use the mutex ', deadEnd: null, workflowRecipe: null })),
    ).toBe('Use the mutex');
  });

  it("should add a dead end's approach, failure and alternative, and a recipe's task and steps", () => {
    expect(memoryText(memory())).toBe(
      [
        'refresh() must run behind the auth mutex or logout races it',
        'retry on 401',
        'retries raced the logout',
        'mutex',
        'adding a new auth provider',
        'add the provider',
      ].join('\n'),
    );
  });
});

describe('episodeDocument', () => {
  it('should keep the record under its episodeId with the prompt range as provenance', () => {
    const { id, body } = episodeDocument(episode());
    expect(id).toBe(EVENT_FIXTURES.Episode.episodeId);
    expect(body).toMatchObject(EVENT_FIXTURES.Episode);
    expect(body.provenance.promptIds).toEqual([12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(body.provenance.episodeIds).toEqual([EVENT_FIXTURES.Episode.episodeId]);
    expect(body.provenance.sessionIds).toEqual(['session-1']);
  });

  it('should search intent, keywords, summary, hot files and key decisions', () => {
    expect(episodeText(episode())).toBe(
      [
        'fix the auth token refresh bug',
        'auth token refresh',
        'Fixed the refresh race by serialising refresh.',
        'src/auth/refresh.ts',
        'serialise refresh behind a mutex',
      ].join('\n'),
    );
  });

  it('should leave out what an open, unannotated episode does not have yet', () => {
    expect(
      episodeText(
        episode({
          intent: null,
          summary: null,
          hotFiles: [],
          keyDecisions: [],
          intentKeywords: [],
        }),
      ),
    ).toBe('');
  });
});

describe('turnDocument', () => {
  it('should index a user prompt under its eventId with the prompt as provenance', () => {
    const document = turnDocument(prompt())!;
    expect(document.id).toBe(EVENT_FIXTURES.PromptSubmitted.eventId);
    expect(document.body).toMatchObject(EVENT_FIXTURES.PromptSubmitted);
    expect(document.body.provenance).toEqual({
      tenantId: 'acme',
      projectId: 'acme/api',
      sessionIds: ['session-1'],
      episodeIds: [],
      promptIds: [12],
      eventIds: [EVENT_FIXTURES.PromptSubmitted.eventId],
      memoryId: null,
      commitSha: null,
    });
  });

  it.each(['agent', 'system'] as const)('should not index %s prompts', (source) => {
    expect(turnDocument(prompt({ source }))).toBeNull();
  });

  it('should redact a secret the producer let through', () => {
    const { body } = turnDocument(prompt({ text: `deploy with aws key ${SECRET} please` }))!;
    expect(body.text).not.toContain(SECRET);
    expect(body.text).toMatch(/^deploy with aws key \[REDACTED:[a-z-]+\] please$/);
  });
});

describe('withEmbedding', () => {
  const { body } = turnDocument(prompt())!;

  it('should store the vector with its model and dimension', () => {
    const document = withEmbedding(body, modelVector('minilm@1', new Float32Array([0.25, -0.5])));
    expect(document).toMatchObject({
      embedding: [0.25, -0.5],
      embeddingModel: 'minilm@1',
      embeddingDims: 2,
    });
    // The form `_source` keeps: float32 little-endian, base64.
    expect(Buffer.from(document.embeddingPacked!, 'base64')).toEqual(
      Buffer.from(new Float32Array([0.25, -0.5]).buffer),
    );
  });

  it('should leave a document without a vector, or with a zero vector, vectorless', () => {
    for (const vector of [null, modelVector('m', [0, 0, 0])]) {
      expect(withEmbedding(body, vector)).toMatchObject({
        embedding: null,
        embeddingPacked: null,
        embeddingModel: null,
        embeddingDims: null,
      });
    }
  });
});

describe('vectorToJson', () => {
  it('should give back exactly the float32 values, in fewer digits', () => {
    const vector = new Float32Array(256).map((_, i) => Math.sin(i * 1.37) / 7);
    const json = vectorToJson(vector);
    expect(json.map((value) => Math.fround(value))).toEqual(Array.from(vector));
    expect(JSON.stringify(json).length).toBeLessThan(JSON.stringify(Array.from(vector)).length);
  });
});

describe('packed vectors', () => {
  const vector = new Float32Array(384).map((_, i) => Math.cos(i * 0.61) / 3);

  it('should give back exactly the float32 values the index holds, in under half the bytes', () => {
    const packed = packVector(vector);
    expect(unpackVector(packed)).toEqual(Array.from(vector));
    // The index parses vectorToJson's numbers to the same float32 values.
    expect(vectorToJson(vector).map(Math.fround)).toEqual(unpackVector(packed));
    expect(packed.length).toBeLessThan(JSON.stringify(vectorToJson(vector)).length / 2);
  });

  it('should refuse a packed value that cannot be float32s', () => {
    expect(() => unpackVector(Buffer.from([1, 2, 3]).toString('base64'))).toThrow(RangeError);
  });

  it('should read a stored source back with its vector in embedding, whatever version wrote it', () => {
    const packed = { text: 'a', embeddingPacked: packVector([0.5, -1]), embeddingModel: 'm' };
    expect(withUnpackedVector(packed)).toEqual({
      text: 'a',
      embedding: [0.5, -1],
      embeddingModel: 'm',
    });
    const vectorless = { text: 'a', embeddingPacked: null, embeddingModel: null };
    expect(withUnpackedVector(vectorless)).toEqual({
      text: 'a',
      embedding: null,
      embeddingModel: null,
    });
    // An older document (numbers in `_source`), or a hit whose vector was filtered out.
    const older = { text: 'a', embedding: [1, 0], embeddingModel: 'm' };
    expect(withUnpackedVector(older)).toBe(older);
  });
});
