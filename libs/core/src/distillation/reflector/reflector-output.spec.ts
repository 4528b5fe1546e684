import { describe, expect, it } from 'vitest';
import { reflectExtractively, type ReflectionInput } from './extractive-reflector';
import { REFLECT_AT, weekOfDistillations } from '../testing/reflector-fixtures';
import {
  evaluateReflectorAttempt,
  parseReflectorOutput,
  proposalsFromReflectorOutput,
} from './reflector-output';
import { buildReflectorPrompt, REFLECTOR_SYSTEM_PROMPT } from './reflector-prompt';
import { applyTemporalGradient } from './temporal-gradient';

const OUTPUT = `<proposals>
## Proposed for: Hard Rules
- [ ] (2026-02-17) Always run the auth tests with --no-file-parallelism
- 🔴 Never commit the .env file

## Proposed for: Joel
- Prefers small conventional commits

## Proposed for: Patterns
- Use the queue worker for all billing exports
</proposals>

<summary>
Auth test rules settled; commit conventions stated.
</summary>`;

function input(): ReflectionInput {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    now: REFLECT_AT,
    distillations: weekOfDistillations(),
  };
}

describe('parseReflectorOutput', () => {
  it('should read sections, strip checkboxes, dates and markers, and the summary', () => {
    const parsed = parseReflectorOutput(OUTPUT);
    expect(parsed.status).toBe('proposals');
    expect(parsed.issues).toEqual([]);
    expect(parsed.lines).toEqual([
      { section: 'Hard Rules', text: 'Always run the auth tests with --no-file-parallelism' },
      { section: 'Hard Rules', text: 'Never commit the .env file' },
      { section: 'User', text: 'Prefers small conventional commits' },
      { section: 'Patterns', text: 'Use the queue worker for all billing exports' },
    ]);
    expect(parsed.summary).toBe('Auth test rules settled; commit conventions stated.');
  });

  it('should handle empty, truncated and malformed output without throwing', () => {
    expect(parseReflectorOutput('')).toMatchObject({ status: 'empty', lines: [] });
    expect(parseReflectorOutput(undefined)).toMatchObject({ status: 'empty' });
    const cut = parseReflectorOutput(OUTPUT.slice(0, OUTPUT.indexOf('## Proposed for: Joel')));
    expect(cut).toMatchObject({ status: 'proposals', truncated: true });
    expect(cut.lines).toHaveLength(2);
    expect(parseReflectorOutput('I have no proposals today.')).toMatchObject({
      status: 'unparseable',
      lines: [],
    });
    const loose = parseReflectorOutput('## Misc\n- something');
    expect(loose.status).toBe('fallback');
    expect(loose.lines).toEqual([{ section: 'Patterns', text: 'something' }]);
    expect(loose.issues).toContain('unknown section "Misc"; its lines go to Patterns');
  });
});

describe('proposalsFromReflectorOutput', () => {
  it('should attach the supporting facts as evidence and skip lines no fact supports', () => {
    const { proposals, skipped } = proposalsFromReflectorOutput(
      parseReflectorOutput(OUTPUT),
      input(),
    );
    expect(proposals.map((p) => [p.proposalId, p.section, p.text])).toEqual([
      ['p-20260217-001', 'User', 'Prefers small conventional commits'],
      // In a section, the line whose evidence is oldest comes first.
      ['p-20260217-002', 'Hard Rules', 'Never commit the .env file'],
      ['p-20260217-003', 'Hard Rules', 'Always run the auth tests with --no-file-parallelism'],
    ]);
    expect(proposals[2].evidence.sessionIds).toEqual(['sess-debug', 'sess-review']);
    expect(skipped).toEqual([
      { text: 'Use the queue worker for all billing exports', reason: 'no-evidence' },
    ]);
  });
});

describe('buildReflectorPrompt', () => {
  it('should carry the current MEMORY.md, the graded distillations and the guidance of the level', () => {
    const graded = applyTemporalGradient(weekOfDistillations(), REFLECT_AT);
    const prompt = buildReflectorPrompt(graded, {
      level: 2,
      memoryMd: '# MEMORY\n- (2026-02-01) x',
    });
    expect(prompt.system).toBe(REFLECTOR_SYSTEM_PROMPT);
    expect(prompt.system).toContain('## Distiller instructions (for reference)');
    expect(prompt.user).toContain('<memory-md>\n# MEMORY\n- (2026-02-01) x\n</memory-md>');
    expect(prompt.user).toContain('### 2026-02-10 · session sess-old · SessionEnded (condensed)');
    expect(prompt.user.endsWith('Drop all 🟢 items entirely.')).toBe(true);
    expect(prompt.omitted).toBe(0);
    expect(prompt.inputTokens).toBeGreaterThan(0);
  });

  it('should leave out the oldest distillations over budget', () => {
    const graded = applyTemporalGradient(weekOfDistillations(), REFLECT_AT);
    const full = buildReflectorPrompt(graded);
    const tight = buildReflectorPrompt(graded, { maxPromptTokens: full.estimatedTokens - 50 });
    expect(tight.omitted).toBe(1);
    expect(tight.user).toContain('session sess-old');
    expect(tight.user).not.toContain('session sess-debug');
  });
});

describe('evaluateReflectorAttempt', () => {
  it('should accept compressed output', () => {
    const attempt = evaluateReflectorAttempt(OUTPUT, { level: 0, inputTokens: 10_000 }, input());
    expect(attempt.kind).toBe('accept');
    expect(attempt.kind === 'accept' ? attempt.result.proposals : []).toHaveLength(3);
  });

  it('should retry at the next level when the output is not shorter, then fall back', () => {
    const long = OUTPUT.repeat(5);
    expect(evaluateReflectorAttempt(long, { level: 0, inputTokens: 100 }, input())).toMatchObject({
      kind: 'retry',
      level: 1,
    });
    expect(evaluateReflectorAttempt(long, { level: 1, inputTokens: 100 }, input())).toMatchObject({
      kind: 'retry',
      level: 2,
    });
    const last = evaluateReflectorAttempt(long, { level: 2, inputTokens: 100 }, input());
    expect(last.kind).toBe('fallback');
    expect(last.kind === 'fallback' ? last.result : null).toEqual(reflectExtractively(input()));
  });

  it('should fall back to the extractive reflector for unparseable output', () => {
    const attempt = evaluateReflectorAttempt('No.', { level: 0, inputTokens: 10_000 }, input());
    expect(attempt).toMatchObject({
      kind: 'fallback',
      reason: 'the reflector output holds no proposals',
    });
  });
});
