import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultModelsDir, MINILM_ARTIFACT, MINILM_ID, miniLmModelDir } from './minilm-artifact';

describe('the pinned MiniLM artifact', () => {
  it('should carry the artifact version in the model id', () => {
    expect(MINILM_ID).toBe(`all-minilm-l6-v2-q@${MINILM_ARTIFACT.version}`);
  });

  it('should live under ~/.cache/engram/models unless another root is given', () => {
    expect(defaultModelsDir()).toBe(join(homedir(), '.cache', 'engram', 'models'));
    expect(miniLmModelDir('/srv/models')).toBe('/srv/models/all-minilm-l6-v2-q');
  });
});
