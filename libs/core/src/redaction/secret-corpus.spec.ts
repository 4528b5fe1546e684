import { describe, expect, it } from 'vitest';
import { redactJson, redactJsonText, redactSecrets } from './index';
import { secretCorpus } from './secret-corpus';

// Issue #19, finding 4: ≥ 20 real-format secret kinds, each in its usual context, through every
// redaction entry (free text, a JSON value, JSON text, a named field); none may survive.

const CORPUS = secretCorpus();

/** Each place a secret reaches the redactor, as the text that comes out. */
const FIELDS: Record<string, (text: string) => string> = {
  text: (text) => redactSecrets(text).text,
  'text in a sentence': (text) => redactSecrets(`Deploy failed. ${text} -- retry?`).text,
  'json value': (text) => JSON.stringify(redactJson({ args: { command: text } }).value),
  'json text': (text) => redactJsonText(JSON.stringify({ output: [text] })).text,
};

describe('the secret corpus', () => {
  it('should hold at least 20 kinds', () => {
    expect(new Set(CORPUS.map((c) => c.name)).size).toBeGreaterThanOrEqual(20);
  });

  it('should redact every kind in every field, 100 %', () => {
    const leaked: string[] = [];
    for (const c of CORPUS) {
      for (const [field, redact] of Object.entries(FIELDS)) {
        const out = redact(c.text);
        // JSON escapes `/` nowhere but `\n` in PEM blocks: compare both forms.
        if (out.includes(c.secret) || out.includes(JSON.stringify(c.secret).slice(1, -1))) {
          leaked.push(`${c.name} in ${field}: ${out}`);
        }
      }
    }
    expect(leaked).toEqual([]);
  });

  it('should name the two AWS gaps the issue found', () => {
    const slash = CORPUS.find((c) => c.name === 'aws secret starting with /')!;
    expect(redactSecrets(slash.text).text).toBe(
      'AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]',
    );
    const prose = CORPUS.find((c) => c.name === 'aws secret in prose')!;
    expect(redactSecrets(prose.text).text).toBe('my secret is [REDACTED:aws-secret-access-key] ok');
  });

  it('should keep what only looks like a bare AWS secret: git SHAs, paths, base64 of other sizes', () => {
    const kept = [
      'commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it',
      'see apps/retrieval/src/RecallService2/module for the wiring',
      'path /home/dev/projects/engram/libs/core/src/x.ts',
      'AWS_CONFIG_FILE=/home/dev/.aws/config',
      'the UPPERCASEONLYSTRINGWITHDIGITS1234567890 constant',
      'integrity sha512-' + 'Ab3d'.repeat(22) + '==',
    ];
    expect(kept.map((text) => redactSecrets(text).text)).toEqual(kept);
  });
});
