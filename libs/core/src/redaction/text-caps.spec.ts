import { describe, expect, it } from 'vitest';
import { ADVERSARIAL_SHAPES } from '../testing/adversarial-text';
import { redactEvent } from './redact-event';
import { redactSecrets } from './redact-secrets';
import { capJsonText, capText, charsCut, EVENT_TEXT_CAPS, textCapOf } from './text-caps';

const FIVE_MB = 5 * 1024 * 1024;
const TOKEN = `ghp_${'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5'}`;
const redact = (text: string) => redactSecrets(text).text;

describe('capText', () => {
  it('should keep text that fits', () => {
    expect(capText('short', 10)).toBe('short');
    expect(charsCut('short')).toBe(0);
  });

  it('should cut to the cap and record how many characters it removed', () => {
    const capped = capText('x'.repeat(1_000), 100);
    expect(capped).toBe(`${'x'.repeat(100)}…[900 chars cut]`);
    expect(charsCut(capped)).toBe(900);
  });

  it('should be idempotent, keeping the original count', () => {
    const once = capText('y'.repeat(50_000), 1_000);
    expect(capText(once, 1_000)).toBe(once);
    expect(charsCut(capText(once, 1_000))).toBe(49_000);
  });

  it('should not split a surrogate pair', () => {
    const capped = capText(`${'a'.repeat(9)}😀😀😀`, 10);
    expect(capped.startsWith(`${'a'.repeat(9)}…`)).toBe(true);
  });

  it('should redact a secret that straddles the cut instead of leaving a fragment', () => {
    const text = `${'word '.repeat(20)}${TOKEN} and more text after it`;
    const cut = text.indexOf(TOKEN) + 12;
    const capped = capText(text, cut, redact);
    expect(capped).not.toContain(TOKEN.slice(0, 12));
    expect(capped).toContain('[REDACTED');
  });
});

describe('capJsonText', () => {
  it('should keep small JSON and cut large JSON to valid JSON with the original length', () => {
    expect(capJsonText('{"a":1}', 100)).toBe('{"a":1}');
    const big = JSON.stringify({ content: 'z'.repeat(10_000) });
    const capped = capJsonText(big, 1_000);
    const parsed = JSON.parse(capped) as { engramCut: { originalChars: number }; head: string };
    expect(parsed.engramCut.originalChars).toBe(big.length);
    expect(parsed.head.startsWith(big.slice(0, 1_000))).toBe(true);
    expect(capJsonText(capped, 1_000)).toBe(capped);
  });

  it('should not let a producer skip the cap by starting with the cut prefix', () => {
    const forged = `{"engramCut":{"originalChars":1},"head":"${'q'.repeat(FIVE_MB)}"}`;
    expect(capJsonText(forged, 1_000).length).toBeLessThan(2_200);
  });
});

describe('redactEvent with caps', () => {
  it.each(Object.keys(ADVERSARIAL_SHAPES))(
    'should cut every 5 MB text field (%s) to its cap and leave ids alone',
    (shape) => {
      const big = ADVERSARIAL_SHAPES[shape](FIVE_MB);
      const event = {
        type: 'ToolCallObserved',
        eventId: '3f786850-e387-4550-bdab-836ed7e6dc88',
        sessionId: 's-1',
        command: big,
        argsJson: JSON.stringify({ command: big }),
        errorMessage: big,
        filePaths: ['src/a.ts', big],
      };
      const capped = redactEvent(event);
      expect(capped.command.length).toBeLessThan(EVENT_TEXT_CAPS.command + 40);
      expect(charsCut(capped.command)).toBe(FIVE_MB - EVENT_TEXT_CAPS.command);
      expect(capped.errorMessage.length).toBeLessThan(EVENT_TEXT_CAPS.errorMessage + 40);
      expect(capped.argsJson.length).toBeLessThan(EVENT_TEXT_CAPS.argsJson * 6 + 64);
      expect(() => JSON.parse(capped.argsJson) as unknown).not.toThrow();
      expect(capped.filePaths[0]).toBe('src/a.ts');
      expect(capped.filePaths[1].length).toBeLessThan(EVENT_TEXT_CAPS.filePaths + 40);
      expect(capped.eventId).toBe(event.eventId);
      expect(redactEvent(capped)).toEqual(capped);
    },
  );

  it('should never cut ids', () => {
    expect(textCapOf('eventId')).toBeNull();
    expect(textCapOf('sessionId')).toBeNull();
    expect(textCapOf('text')).toBe(EVENT_TEXT_CAPS.text);
  });
});
