import { describe, expect, it } from 'vitest';
import { distillationFromLlmOutput } from './llm-distillation';
import { debuggingSession } from './testing/session-builder';
import { distillationWindow, type DistillationWindow } from './triggers';

function episodeWindow(): DistillationWindow {
  const session = debuggingSession();
  const decision = distillationWindow(session.episodeClosed(1, 6, 'ep-debug'), session.events());
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return decision.window;
}

const OUTPUT = `<observations>
Date: 2031-01-01
<segment>
<narrative>Fixed the refresh test; the cause was clock skew.</narrative>
<facts>
* 🔴 (09:04) Root cause: clock skew in src/auth/clock.ts, not the cache TTL; fixed there
* 🟡 (13:37) Invented time for a real fact about refresh.spec.ts
* 🟢 Considered covering the logout path
</facts>
</segment>
</observations>
<current-task>
Primary: none
</current-task>`;

describe('distillationFromLlmOutput', () => {
  const window = episodeWindow();

  it("should tie facts to the events of their minute and the window's files", () => {
    const { distillation, fellBack, parse } = distillationFromLlmOutput(OUTPUT, window);
    expect(fellBack).toBe(false);
    expect(parse.status).toBe('segments');
    expect(distillation.method).toBe('llm');
    expect(distillation.dedupeKey).toBe(window.dedupeKey);
    const [segment] = distillation.segments;
    expect(segment.episodeId).toBe('ep-debug');
    expect(segment.facts[0]).toEqual({
      priority: '🔴',
      time: '09:04',
      at: window.toolCalls.find((c) => c.eventId === 'sess-debug-t6')?.timestamp,
      text: 'Root cause: clock skew in src/auth/clock.ts, not the cache TTL; fixed there',
      kind: null,
      sourceEventIds: ['sess-debug-t6', 'sess-debug-t7'],
      relatedFiles: ['src/auth/clock.ts'],
    });
  });

  it("should never keep a time the window does not have, nor take the model's date", () => {
    const { distillation, parse } = distillationFromLlmOutput(OUTPUT, window);
    const invented = distillation.segments[0].facts[1];
    expect(invented.time).toBeNull();
    expect(invented.at).toBeNull();
    // Without a time, provenance is the window's user prompts.
    expect(invented.sourceEventIds).toEqual(
      window.prompts.filter((p) => p.source === 'user').map((p) => p.eventId),
    );
    expect(invented.relatedFiles).toEqual(['src/auth/refresh.spec.ts']);
    expect(parse.issues).toContain('1 fact times not in the transcript were removed');
    expect(distillation.date).toBe('2026-02-16');
  });

  it.each([
    ['empty', ''],
    ['malformed', 'Sorry, I cannot help with that.'],
    ['without facts', '<observations>\nDate: 2026-02-16\n</observations>'],
  ])('should fall back to the extractive distiller for %s output', (_name, raw) => {
    const { distillation, fellBack } = distillationFromLlmOutput(raw, window);
    expect(fellBack).toBe(true);
    expect(distillation.method).toBe('extractive');
    expect(distillation.segments[0].facts.length).toBeGreaterThan(0);
  });

  it('should keep what a truncated output holds', () => {
    const cut = OUTPUT.slice(0, OUTPUT.indexOf('* 🟢'));
    const { distillation, fellBack, parse } = distillationFromLlmOutput(cut, window);
    expect(fellBack).toBe(false);
    expect(parse.truncated).toBe(true);
    expect(distillation.segments[0].facts).toHaveLength(2);
  });
});
