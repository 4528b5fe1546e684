import { describe, expect, it } from 'vitest';
import { DEFAULT_HOOK_DATA_DIR, hookSocketOptions, lineReader } from './hook-socket-protocol';

// What the hook entry sends to the socket, or null for "let the full command handle it": an
// option it misreads would send a hook to the wrong data dir, tenant or project.

describe('hookSocketOptions', () => {
  it("should read the hook command's options, both spellings, paths against the cwd", () => {
    expect(
      hookSocketOptions(
        [
          '--data-dir',
          'data',
          '--tenant=acme',
          '--project',
          'acme/api',
          '--agent',
          'a',
          '--user=u',
          '--budget-ms',
          '500',
          '--context-budget-ms=2000',
          '--no-context',
        ],
        '/home/dev/api',
      ),
    ).toEqual({
      dataDir: '/home/dev/api/data',
      distributed: false,
      context: false,
      tenant: 'acme',
      project: 'acme/api',
      agent: 'a',
      user: 'u',
      budgetMs: 500,
      contextBudgetMs: 2000,
    });
    expect(hookSocketOptions(['--distributed'], '/x')).toEqual({
      dataDir: DEFAULT_HOOK_DATA_DIR,
      distributed: true,
      context: true,
    });
  });

  it('should leave to the full command what the socket does not serve or what is wrong', () => {
    const cases = [
      ['--flush'],
      ['--help'],
      ['install'],
      ['--data-dir'],
      ['--budget-ms', '5'],
      ['--budget-ms', 'soon'],
      ['--context-budget-ms=1.5'],
      ['--tenant', 'acme', '--unknown'],
    ];
    expect(cases.map((args) => [args.join(' '), hookSocketOptions(args, '/x')])).toEqual(
      cases.map((args) => [args.join(' '), null]),
    );
  });
});

describe('lineReader', () => {
  it('should give each JSON line once, whatever the chunks', () => {
    const seen: unknown[] = [];
    const read = lineReader((message) => seen.push(message));
    read(Buffer.from('{"kind":"acc'));
    read(Buffer.from('epted"}\n\n{"kind":"ack","published":1}\n{"kind"'));
    expect(seen).toEqual([{ kind: 'accepted' }, { kind: 'ack', published: 1 }]);
    read(Buffer.from(':"done"}\n'));
    expect(seen).toHaveLength(3);
    expect(() => read(Buffer.from('not json\n'))).toThrow();
  });
});
