import { InvalidEventError } from '@engram/errors';
import { describe, expect, it } from 'vitest';
import { avroTypeOfTopic } from './avro-schemas';
import { toAvroValue } from './avro-values';
import {
  decodeReplayLine,
  decodeReplayLineBytes,
  decodeReplayLines,
  ReplayLineError,
} from './replay-decoder';
import { EVENT_FIXTURES } from './testing/event-fixtures';
import { RECORD_NAMES } from './topics';

const ENVELOPE = {
  eventId: 'e-1',
  tenantId: 'acme',
  projectId: 'acme/api',
  sessionId: 's-1',
  agentId: 'claude-code',
};

function line(fields: Record<string, unknown>): string {
  return JSON.stringify(fields);
}

function errorOf(text: string, lineNo = 1): ReplayLineError {
  try {
    decodeReplayLine(text, lineNo);
  } catch (error) {
    if (error instanceof ReplayLineError) return error;
    throw error;
  }
  throw new Error('expected a ReplayLineError');
}

describe('decodeReplayLine', () => {
  it('should decode a minimal prompt, filling defaults and absent optional fields', () => {
    const decoded = decodeReplayLine(
      line({
        type: 'PromptSubmitted',
        ...ENVELOPE,
        timestamp: 1_700_000_000_000,
        promptId: 1,
        source: 'user',
        channel: 'cli',
        channelKind: 'implicit',
        text: 'fix the flaky auth test',
      }),
      7,
    );
    expect(decoded).toMatchObject({ line: 7, topic: 'agent.prompts.v1', key: 's-1' });
    expect(decoded.event).toEqual({
      type: 'PromptSubmitted',
      ...ENVELOPE,
      userId: null,
      timestamp: 1_700_000_000_000,
      schemaVersion: 1,
      promptId: 1,
      source: 'user',
      channel: 'cli',
      channelKind: 'implicit',
      explicitThreadId: null,
      text: 'fix the flaky auth test',
      methodology: null,
      methodologyPhase: null,
      workUnitRef: null,
      parentEpisodeId: null,
    });
  });

  it('should accept ISO 8601 timestamps with a zone and convert them to epoch millis', () => {
    const decoded = decodeReplayLine(
      line({
        type: 'SessionEnded',
        ...ENVELOPE,
        timestamp: '2025-11-05T10:45:00.250+01:00',
        userMessageCount: 6,
        durationS: 1200,
      }),
      1,
    );
    expect(decoded.event.timestamp).toBe(Date.UTC(2025, 10, 5, 9, 45, 0, 250));
    expect(decoded.topic).toBe('agent.lifecycle.v1');
  });

  it('should decode nested records and arrays, and give the topic and key from the type', () => {
    const decoded = decodeReplayLine(
      line({
        type: 'ValidationFailed',
        ...ENVELOPE,
        timestamp: 5,
        workUnitRef: { methodology: 'bmad', hierarchy: ['epic_3', 'story_3_2'], label: 'E3/S3.2' },
        issues: [{ severity: 'critical', description: 'login loops' }],
      }),
      1,
    );
    expect(decoded.event).toMatchObject({
      type: 'ValidationFailed',
      summary: null,
      issues: [{ severity: 'critical', description: 'login loops', file: null, module: null }],
    });
    expect(avroTypeOfTopic(decoded.topic).isValid(toAvroValue(decoded.event))).toBe(true);
  });

  it.each(RECORD_NAMES.map((name) => [name] as const))(
    'should decode a recorded %s into an event its topic schema accepts',
    (name) => {
      const decoded = decodeReplayLine(line({ type: name, ...EVENT_FIXTURES[name] }), 1);
      expect(decoded.event).toEqual({ type: name, ...EVENT_FIXTURES[name] });
      expect(avroTypeOfTopic(decoded.topic).isValid(toAvroValue(decoded.event))).toBe(true);
    },
  );

  it('should take the default type for lines without one (engram segment)', () => {
    const { type: _type, ...prompt } = { type: 'x', ...EVENT_FIXTURES.PromptSubmitted };
    const decoded = decodeReplayLine(line(prompt), 1, { defaultType: 'PromptSubmitted' });
    expect(decoded.event.type).toBe('PromptSubmitted');
  });

  it.each([
    ['not json', '{"type": ', null, /line 4: not valid JSON/],
    ['not an object', '[1, 2]', null, /line 4: expected a JSON object/],
    ['missing type', line({ ...ENVELOPE }), 'type', /line 4: type: missing/],
    ['unknown type', line({ type: 'WorkUnitRef' }), 'type', /unknown record "WorkUnitRef"/],
  ])('should report %s with the line number', (_case, text, field, message) => {
    const error = errorOf(text, 4);
    expect(error).toBeInstanceOf(InvalidEventError);
    expect(error.line).toBe(4);
    expect(error.field).toBe(field);
    expect(error.raw).toBe(text);
    expect(error.message).toMatch(message);
  });

  it.each([
    [
      'a missing required field',
      { type: 'SessionEnded', ...ENVELOPE, timestamp: 1, userMessageCount: 1 },
      'durationS',
      /line 9: SessionEnded\.durationS: missing required field/,
    ],
    [
      'a wrong primitive',
      { type: 'SessionEnded', ...ENVELOPE, timestamp: 1, userMessageCount: 'six', durationS: 1 },
      'userMessageCount',
      /expected an int \(32-bit integer\), got "six"/,
    ],
    [
      'an unparseable timestamp',
      {
        type: 'SessionEnded',
        ...ENVELOPE,
        timestamp: 'yesterday',
        userMessageCount: 1,
        durationS: 1,
      },
      'timestamp',
      /timestamp: expected epoch millis or an ISO 8601 date-time/,
    ],
    [
      'an ISO timestamp without a zone',
      {
        type: 'SessionEnded',
        ...ENVELOPE,
        timestamp: '2025-11-05T10:45:00',
        userMessageCount: 1,
        durationS: 1,
      },
      'timestamp',
      /timestamp: expected epoch millis/,
    ],
    [
      'a symbol outside the enum',
      { type: 'TaskClassified', ...ENVELOPE, timestamp: 1, complexity: 'huge' },
      'complexity',
      /expected one of trivial \| standard \| complex, got "huge"/,
    ],
    [
      'a bad nested field',
      {
        type: 'SubtaskValidated',
        ...ENVELOPE,
        timestamp: 1,
        succeeded: true,
        workUnitRef: { methodology: 'tdd', hierarchy: ['f', 7], label: 'x' },
      },
      'workUnitRef.hierarchy[1]',
      /SubtaskValidated\.workUnitRef\.hierarchy\[1\]: expected a string, got 7/,
    ],
    [
      'null in a required field',
      { type: 'SessionEnded', ...ENVELOPE, timestamp: 1, userMessageCount: null, durationS: 1 },
      'userMessageCount',
      /expected an int \(32-bit integer\), got null/,
    ],
    [
      'an unknown field',
      {
        type: 'SessionEnded',
        ...ENVELOPE,
        timestamp: 1,
        userMessageCount: 1,
        durationS: 1,
        extra: 1,
      },
      'extra',
      /SessionEnded\.extra: unknown field of SessionEnded/,
    ],
    [
      'an empty id',
      {
        type: 'SessionEnded',
        ...ENVELOPE,
        eventId: ' ',
        timestamp: 1,
        userMessageCount: 1,
        durationS: 1,
      },
      'eventId',
      /SessionEnded\.eventId: must not be empty/,
    ],
    [
      'an empty compacted-topic key',
      { type: 'Proposal', ...EVENT_FIXTURES.Proposal, proposalId: '' },
      'proposalId',
      /Proposal\.proposalId: empty key/,
    ],
  ])('should name the offending field for %s', (_case, fields, field, message) => {
    const error = errorOf(line(fields), 9);
    expect(error.field).toBe(field);
    expect(error.message).toMatch(message);
  });

  it('should ignore unknown fields when asked to', () => {
    const text = line({
      type: 'SessionEnded',
      ...ENVELOPE,
      timestamp: 1,
      userMessageCount: 1,
      durationS: 1,
      extra: 1,
    });
    const decoded = decodeReplayLine(text, 1, { unknownFields: 'ignore' });
    expect(decoded.event).not.toHaveProperty('extra');
  });
});

describe('decodeReplayLines', () => {
  it('should decode every good line, skip blank ones and report bad ones by line number', () => {
    const good = line({
      type: 'SessionEnded',
      ...ENVELOPE,
      timestamp: 1,
      userMessageCount: 1,
      durationS: 1,
    });
    const content = [good, '', '{oops', good, '   ', line({ type: 'Nope' })].join('\r\n') + '\n';
    const { events, errors } = decodeReplayLines(content);
    expect(events.map((e) => e.line)).toEqual([1, 4]);
    expect(errors.map((e) => e.line)).toEqual([3, 6]);
    expect(errors[0].raw).toBe('{oops');
  });
});

describe('decodeReplayLineBytes', () => {
  const good = line({
    type: 'SessionEnded',
    ...ENVELOPE,
    timestamp: 1,
    userMessageCount: 1,
    durationS: 1,
  });

  it('should drop a UTF-8 byte order mark on line 1 (it failed line 1 before)', () => {
    const bytes = Buffer.from(`\uFEFF${good}\r`);
    expect(decodeReplayLineBytes(bytes, 1)).toBe(good);
    expect(decodeReplayLines(`\uFEFF${good}\n`).events).toHaveLength(1);
    // Elsewhere a BOM is content, and the line is reported.
    expect(() => decodeReplayLine(decodeReplayLineBytes(bytes, 2), 2)).toThrow(/^line 2: /);
  });

  it('should report invalid UTF-8 with its line and column, not turn it into U+FFFD', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"text":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    let error: unknown;
    try {
      decodeReplayLineBytes(bytes, 7);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ReplayLineError);
    expect((error as ReplayLineError).message).toBe(
      'line 7: not valid UTF-8 (first bad byte at column 13)',
    );
    expect(decodeReplayLineBytes(Buffer.from('{"text":"café ✓ 𝄞"}'), 1)).toBe(
      '{"text":"café ✓ 𝄞"}',
    );
  });
});
