import { describe, expect, it } from 'vitest';
import {
  assertServable,
  isLoopbackAddress,
  resolveTenant,
  TenantAccessError,
  tenantTokens,
} from './tenant-access';

const TOKENS = tenantTokens({
  't-acme': { tenants: ['acme'], role: 'read' },
  't-both': { tenants: ['acme', 'globex'], role: 'write' },
  't-admin': { tenants: ['acme'], role: 'admin' },
});

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
    expect(resolveTenant(null, undefined, 'acme', 'admin')).toBe('acme');
  });

  it("should default to the token's only tenant and allow its own tenants", () => {
    expect(resolveTenant(TOKENS, 'Bearer t-acme', '')).toBe('acme');
    expect(resolveTenant(TOKENS, 'bearer t-both', 'globex')).toBe('globex');
    // Two tenants and none named: undecided, so the scope check names the missing field.
    expect(resolveTenant(TOKENS, 'Bearer t-both', '')).toBe('');
  });

  it('should refuse missing or unknown tokens and other tenants', () => {
    expect(kindOf(() => resolveTenant(TOKENS, undefined, 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, '', 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 't-acme', 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer nope', 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer t-acme\nx', 'acme'))).toBe('unauthenticated');
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer t-acme', 'globex'))).toBe(
      'permission_denied',
    );
  });

  it('should refuse a role weaker than the call needs', () => {
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer t-acme', 'acme', 'write'))).toBe(
      'permission_denied',
    );
    expect(kindOf(() => resolveTenant(TOKENS, 'Bearer t-both', 'acme', 'admin'))).toBe(
      'permission_denied',
    );
    expect(resolveTenant(TOKENS, 'Bearer t-both', 'acme', 'write')).toBe('acme');
    expect(resolveTenant(TOKENS, 'Bearer t-admin', 'acme', 'admin')).toBe('acme');
    expect(resolveTenant(TOKENS, 'Bearer t-admin', '', 'read')).toBe('acme');
  });
});

describe('isLoopbackAddress / assertServable', () => {
  it('should trust loopback only', () => {
    for (const url of ['127.0.0.1:50051', 'localhost:1', '[::1]:50051', '127.1.2.3:9']) {
      expect(isLoopbackAddress(url)).toBe(true);
    }
    for (const url of ['0.0.0.0:50051', '[::]:50051', '10.0.0.5:1', 'engram.example:443']) {
      expect(isLoopbackAddress(url)).toBe(false);
    }
  });

  it('should refuse a non-loopback server without tokens, naming the setting', () => {
    expect(() => assertServable('0.0.0.0:50051', null, 'engram.recall.v1')).toThrow(
      /ENGRAM_GRPC_TOKENS_FILE/,
    );
    expect(() => assertServable('0.0.0.0:50051', TOKENS, 'engram.recall.v1')).not.toThrow();
    expect(() => assertServable('127.0.0.1:50051', null, 'engram.recall.v1')).not.toThrow();
  });
});
