import { describe, expect, it } from 'vitest';
import { toolKindOf } from './tool-kinds';

describe('toolKindOf', () => {
  it('should know the common agent tools', () => {
    expect(
      ['Read', 'Edit', 'MultiEdit', 'Write', 'Grep', 'Glob', 'Bash'].map((t) => toolKindOf(t)),
    ).toEqual(['read', 'edit', 'edit', 'edit', 'search', 'search', 'execute']);
    expect(toolKindOf('apply_patch')).toBe('edit');
    expect(toolKindOf('shell')).toBe('execute');
  });

  it('should guess MCP and other tools from keywords, edits before reads', () => {
    expect(toolKindOf('mcp__fs__write_file')).toBe('edit');
    expect(toolKindOf('mcp__fs__read_file')).toBe('read');
    expect(toolKindOf('list_directory')).toBe('search');
    expect(toolKindOf('run_tests')).toBe('execute');
    expect(toolKindOf('browser_click')).toBe('other');
  });

  it('should let overrides win', () => {
    expect(toolKindOf('Read', { Read: 'other' })).toBe('other');
  });
});
