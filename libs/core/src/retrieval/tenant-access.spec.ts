import { describe, expect, it } from 'vitest';
import { resolveTenant, TenantAccessError } from './tenant-access';

const TOKENS = new Map([
  ['t-acme', ['acme']],
  ['t-both', ['acme', 'globex']],
]);

function kindOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof TenantAccessError) return error.kind;
    throw error;
  }
  return 'none';
}

describe('resolveTenant', () => {
  it('should take the requested tenant when no tokens are configured', () => {
    expect(resolveTenant(null, undefined, ' acme ')).toBe('acme');
    expect(resolveTenant(null, undefined, '')).toBe('');
  });

  it("should default to the token's only tenant and allow its own tenants", () => {
    expect(resolveTenant(TOKENS, 'Bearer t-acme', '')).toBe('acme');
    expect(resolveTenant(TOKENS, 'bearer t-both', 'globex')).toBe('globex');
    // Two tenants and none named: undecided, so the scope check names the missing field.
    expect(resolveTenant(TOKENS, 'Bearer t-both', '')).toBe('');
  });

  it('should refuse missing or unknown tokens and other tenants', () => {
    expect(kindOf(() => resolveTenant(TOKENS, undefined, 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer nope', 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer t-acme', 'globex'))).toBe(
      'permission_denied',
    );
  });
});
