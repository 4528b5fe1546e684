import { describe, expect, it } from 'vitest';
import { observerSettings } from './observer-settings';
import { bash, edit, grep, ofType, read, runSession } from './testing/observer-fixtures';

const RECIPE = [
  grep(0, 'src/ipc/handlers.ts'),
  read(1, 'src/ipc/handlers.ts'),
  edit(2, 'src/ipc/handlers.ts'),
  edit(3, 'src/ipc/channels.ts'),
  bash(4, 'npm test'),
];

describe('sequence detection', () => {
  it('should emit tool 4-, 5- and 6-grams in the scope of their dominant module', () => {
    const sequences = ofType(runSession(RECIPE).signals, 'sequence');
    expect(sequences.map((s) => s.sequenceKey)).toEqual([
      'src/ipc|Grep>Read>Edit>Edit',
      'src/ipc|Read>Edit>Edit>Bash',
      'src/ipc|Grep>Read>Edit>Edit>Bash',
    ]);
    expect(sequences[0].files).toEqual([
      'src/ipc/handlers.ts',
      'src/ipc/handlers.ts',
      'src/ipc/handlers.ts',
      'src/ipc/channels.ts',
    ]);
    expect(sequences[1].files[3]).toBeNull();
  });

  it('should emit a key once per session and skip n-grams of repeated steps', () => {
    const repeated = [0, 1, 2, 3, 4].map((step) => read(step, 'src/a.ts'));
    expect(ofType(runSession(repeated).signals, 'sequence')).toEqual([]);
    const twice = [...RECIPE, ...RECIPE.map((c) => ({ ...c, step: c.step + 10 }))];
    const keys = ofType(
      runSession(twice, { settings: observerSettings({ sequenceLengths: [4] }) }).signals,
      'sequence',
    ).map((s) => s.sequenceKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('should leave failed calls out of sequences', () => {
    const withFailure = [
      ...RECIPE.slice(0, 2),
      bash(2, 'npm test', 'boom'),
      ...RECIPE.slice(2).map((c) => ({ ...c, step: c.step + 1 })),
    ];
    const keys = ofType(runSession(withFailure).signals, 'sequence').map((s) => s.sequenceKey);
    expect(keys).toContain('src/ipc|Grep>Read>Edit>Edit');
  });

  it('should never build a sequence across sessions', () => {
    const first = runSession(RECIPE.slice(0, 2), { sessionId: 's1' });
    const second = runSession(RECIPE.slice(2), { sessionId: 's2' });
    expect(ofType([...first.signals, ...second.signals], 'sequence')).toEqual([]);
  });
});
