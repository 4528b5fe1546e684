import { describe, expect, it } from 'vitest';
import { v5 as uuidv5 } from 'uuid';
import { ENGRAM_ID_NAMESPACE, idOf, uuidV5 } from './deterministic-id';

describe('deterministic ids', () => {
  it('should equal the uuid package v5 in the Engram namespace', () => {
    for (const name of ['', 'session-1:1', 'ü/ß:é', 'x'.repeat(500)]) {
      expect(uuidV5(name)).toBe(uuidv5(name, ENGRAM_ID_NAMESPACE));
    }
  });

  it('should keep key parts apart so different splits give different ids', () => {
    expect(idOf('a|b', 'c')).not.toBe(idOf('a', 'b|c'));
    expect(idOf('a', 1)).toBe(idOf('a', '1'));
    expect(idOf('t', 'p', 'gotcha')).toBe(idOf('t', 'p', 'gotcha'));
  });
});
