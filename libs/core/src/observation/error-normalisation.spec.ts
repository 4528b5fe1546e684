import { describe, expect, it } from 'vitest';
import { errorKeyOf, normaliseErrorMessage } from './error-normalisation';

describe('normaliseErrorMessage', () => {
  it('should strip paths, numbers, hex ids, uuids and timestamps', () => {
    expect(
      normaliseErrorMessage(
        "Error: Cannot find module '/tmp/build-4411/out.js' at 2026-02-18T09:00:00.123Z (req 3f2a1b9c-1234-4abc-9def-0123456789ab, commit a1b2c3d4e5f, ptr 0xdeadbeef) after 1500 ms",
      ),
    ).toBe(
      "Error: Cannot find module '<path>' at <time> (req <id>, commit <hex>, ptr <hex>) after <n> ms",
    );
  });

  it('should make the same failure with different noise equal', () => {
    const first = normaliseErrorMessage(
      'src/auth/token.ts(12,5): error TS2345: bad argument at 10:01:02',
    );
    const second = normaliseErrorMessage(
      'src/api/user.ts(88,17): error TS2345: bad argument at 23:59:59',
    );
    expect(first).toBe(second);
  });

  it('should keep error codes, which tell different errors apart', () => {
    expect(normaliseErrorMessage('error TS2345')).not.toBe(normaliseErrorMessage('error TS2322'));
    expect(normaliseErrorMessage('E11000 duplicate key')).toBe('E11000 duplicate key');
  });

  it('should strip bare source file names, Windows paths, URLs and colour codes', () => {
    const esc = String.fromCharCode(27);
    expect(normaliseErrorMessage(`${esc}[31mFAIL${esc}[0m token.spec.ts`)).toBe('FAIL <path>');
    expect(normaliseErrorMessage('C:\\repo\\src\\a.ts: ENOENT')).toBe('<path>: ENOENT');
    expect(normaliseErrorMessage('GET http://localhost:3000/api/x failed')).toBe(
      'GET <url> failed',
    );
  });

  it('should collapse whitespace and bound the length', () => {
    expect(normaliseErrorMessage('  a \n\n b  ')).toBe('a b');
    expect(normaliseErrorMessage('x'.repeat(1000))).toHaveLength(300);
  });
});

describe('errorKeyOf', () => {
  it('should be stable and depend on the tool as well as the message', () => {
    expect(errorKeyOf('Bash', 'boom')).toBe(errorKeyOf('Bash', 'boom'));
    expect(errorKeyOf('Bash', 'boom')).not.toBe(errorKeyOf('Edit', 'boom'));
  });
});
