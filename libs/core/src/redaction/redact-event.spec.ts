import { describe, expect, it } from 'vitest';
import { redactEvent, redactRawLine } from './redact-event';
import { secretCorpus } from './secret-corpus';

describe('redactEvent', () => {
  it('should redact every text field, nested records and string arrays, and keep the rest', () => {
    for (const c of secretCorpus()) {
      const event = {
        type: 'ToolCallObserved',
        eventId: '3f786850-e387-4550-bdab-836ed7e6dc88',
        stepIndex: 3,
        command: c.text,
        argsJson: JSON.stringify({ command: c.text, env: { PASSWORD: 'hunter2-x9!' } }),
        errorMessage: `failed: ${c.text}`,
        filePaths: ['src/a.ts', c.text],
        embedding: [0.1, 0.2],
        details: { notes: [{ text: c.text }] },
        tokensUsed: 12,
      };
      const redacted = redactEvent(event);
      expect(JSON.stringify(redacted)).not.toContain(c.secret.split('\n')[1] ?? c.secret);
      expect(JSON.stringify(redacted)).not.toContain('hunter2-x9!');
      expect(redacted).toMatchObject({
        type: 'ToolCallObserved',
        eventId: event.eventId,
        stepIndex: 3,
        embedding: [0.1, 0.2],
        tokensUsed: 12,
      });
      expect(redacted.filePaths[0]).toBe('src/a.ts');
      expect(redactEvent(redacted)).toEqual(redacted);
      expect(event.command).toBe(c.text);
    }
  });

  it('should redact a raw line, JSON or not', () => {
    const token = `ghp_${'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5'}`;
    expect(redactRawLine(`{"text": "use ${token}"}`)).not.toContain(token);
    expect(redactRawLine(`not json ${token}`)).toBe('not json [REDACTED:github-token]');
  });
});
