import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultModelsDir, MINILM_ARTIFACT, MINILM_ID, miniLmModelDir } from './minilm-artifact';

/** The value of `NAME=value` in the setup script. */
function setupVariable(script: string, name: string): string | undefined {
  return new RegExp(`^${name}=(\\S+)$`, 'm').exec(script)?.[1];
}

describe('the pinned MiniLM artifact', () => {
  it('should match what deploy/models/setup.sh installs', () => {
    const script = readFileSync(join(__dirname, '../../../deploy/models/setup.sh'), 'utf8');

    expect({
      maven: `${setupVariable(script, 'GROUP_ID')}:${setupVariable(script, 'ARTIFACT_ID')}`,
      version: setupVariable(script, 'VERSION'),
      onnxFile: setupVariable(script, 'ONNX_FILE'),
      onnxSha256: setupVariable(script, 'ONNX_SHA256'),
      tokenizerFile: setupVariable(script, 'TOKENIZER_FILE'),
      tokenizerSha256: setupVariable(script, 'TOKENIZER_SHA256'),
    }).toEqual({
      maven: MINILM_ARTIFACT.maven,
      version: MINILM_ARTIFACT.version,
      onnxFile: MINILM_ARTIFACT.onnxFile,
      onnxSha256: MINILM_ARTIFACT.onnxSha256,
      tokenizerFile: MINILM_ARTIFACT.tokenizerFile,
      tokenizerSha256: MINILM_ARTIFACT.tokenizerSha256,
    });
  });

  it('should carry the artifact version in the model id', () => {
    expect(MINILM_ID).toBe(`all-minilm-l6-v2-q@${MINILM_ARTIFACT.version}`);
  });

  it('should live under ~/.cache/engram/models unless another root is given', () => {
    expect(defaultModelsDir()).toBe(join(homedir(), '.cache', 'engram', 'models'));
    expect(miniLmModelDir('/srv/models')).toBe('/srv/models/all-minilm-l6-v2-q');
  });
});
