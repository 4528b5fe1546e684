import { describe, expect, it } from 'vitest';
import {
  AGILE_PLUGIN,
  BMAD_PLUGIN,
  methodologyPlugin,
  NATIVE_PLUGIN,
  normalisePhaseName,
  TDD_PLUGIN,
  toUniversalPhase,
} from './methodology-plugins';

describe('methodology plugins', () => {
  it('should map the native phases of seed 002 §3', () => {
    expect(
      [
        'planning',
        'spec',
        'coding',
        'qa_review',
        'qa_fix',
        'debugging',
        'insights',
        'retrospective',
      ].map((phase) => NATIVE_PLUGIN.mapPhase(phase)),
    ).toEqual([
      'define',
      'define',
      'implement',
      'validate',
      'refine',
      'refine',
      'explore',
      'reflect',
    ]);
  });

  it('should map the bmad phases of seed 002 §3', () => {
    const phases = [
      'analyst',
      'pm',
      'architect',
      'story_creation',
      'dev',
      'story_development',
      'qa',
    ];
    expect(phases.map((phase) => BMAD_PLUGIN.mapPhase(phase))).toEqual([
      'define',
      'define',
      'define',
      'define',
      'implement',
      'implement',
      'validate',
    ]);
    expect(
      ['story_acceptance', 'sm', 'retrospective', 'research'].map((p) => BMAD_PLUGIN.mapPhase(p)),
    ).toEqual(['validate', 'reflect', 'reflect', 'explore']);
  });

  it('should map red-green-refactor for tdd', () => {
    expect(
      ['red', 'green', 'assertion', 'refactor', 'spike', 'retrospective'].map((p) =>
        TDD_PLUGIN.mapPhase(p),
      ),
    ).toEqual(['define', 'implement', 'validate', 'refine', 'explore', 'reflect']);
  });

  it('should map agile ceremonies, tech_debt to refine', () => {
    expect(
      ['sprint_planning', 'development', 'code_review', 'tech_debt', 'spike', 'retrospective'].map(
        (p) => AGILE_PLUGIN.mapPhase(p),
      ),
    ).toEqual(['define', 'implement', 'validate', 'refine', 'explore', 'reflect']);
  });

  it('should map an unknown phase to explore', () => {
    for (const plugin of [NATIVE_PLUGIN, BMAD_PLUGIN, TDD_PLUGIN, AGILE_PLUGIN]) {
      expect(plugin.mapPhase('lunch')).toBe('explore');
      expect(plugin.mapPhase('')).toBe('explore');
    }
  });

  it('should pass universal phase names through (callers may already hold one)', () => {
    expect(NATIVE_PLUGIN.mapPhase('validate')).toBe('validate');
    expect(TDD_PLUGIN.mapPhase('Reflect')).toBe('reflect');
  });

  it('should not let inherited object keys masquerade as phases', () => {
    expect(NATIVE_PLUGIN.mapPhase('constructor')).toBe('explore');
    expect(NATIVE_PLUGIN.mapPhase('__proto__')).toBe('explore');
  });

  it('should normalise case, spaces and hyphens in phase names', () => {
    expect(normalisePhaseName('  QA Review ')).toBe('qa_review');
    expect(NATIVE_PLUGIN.mapPhase('QA-Review')).toBe('validate');
    expect(AGILE_PLUGIN.mapPhase('Tech Debt')).toBe('refine');
  });

  it('should find plugins by id case-insensitively', () => {
    expect(methodologyPlugin('BMAD')).toBe(BMAD_PLUGIN);
    expect(methodologyPlugin('kanban')).toBeUndefined();
  });

  it('should resolve a methodology phase, treating an unknown methodology or phase as explore', () => {
    expect(toUniversalPhase('tdd', 'red')).toBe('define');
    expect(toUniversalPhase('native', 'red')).toBe('explore');
    expect(toUniversalPhase('kanban', 'doing')).toBe('explore');
    expect(toUniversalPhase('kanban', 'implement')).toBe('implement');
    expect(toUniversalPhase(null, 'refine')).toBe('refine');
    expect(toUniversalPhase('bmad', null)).toBe('explore');
    expect(toUniversalPhase(undefined, '  ')).toBe('explore');
  });
});
