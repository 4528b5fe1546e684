import { deadLetterHeaders, InvalidEventError } from '@engram/core';
import { SqliteEventLog } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddedDeadLetters } from '../dead-letters';
import { dlqList, dlqRedrive, dlqShow, formatListed, formatShown } from './dlq.command';

// Issue 19 finding 5: dead letters could only be read with sqlite3.

const PROMPTS = 'agent.prompts.v1';
const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';

let dir: string;
let log: SqliteEventLog;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-dlq-'));
  log = SqliteEventLog.open({ dataDir: dir });
  log.ensureTopic(PROMPTS, 3, { withDeadLetter: true });
  const at = new Date('2026-11-26T10:00:00.000Z');
  log.append(`${PROMPTS}.dlq`, [
    {
      key: 'sess-1',
      value: JSON.stringify({ type: 'PromptSubmitted', eventId: 'e-1', text: `token ${SECRET}` }),
      headers: deadLetterHeaders(
        new InvalidEventError('prompt text is 200000 characters, over the limit of 100000'),
        { topic: PROMPTS, partition: 1, offset: '7' },
        'engram-segmenter',
        at,
      ),
    },
    {
      key: null,
      value: 'not json',
      headers: deadLetterHeaders(
        new InvalidEventError('line 3: not valid JSON'),
        { topic: PROMPTS, partition: 0, offset: '3' },
        'engram-replay',
        at,
      ),
    },
  ]);
});

afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('engram dlq (embedded)', () => {
  it('should list every dead letter with its error, source and time', async () => {
    const listed = await dlqList(embeddedDeadLetters(log));
    expect(listed.map((entry) => entry.view)).toMatchObject([
      {
        id: 'agent.prompts.v1.dlq:0:0',
        topic: 'agent.prompts.v1.dlq',
        offset: 0,
        errorClass: 'InvalidEventError',
        message: 'prompt text is 200000 characters, over the limit of 100000',
        sourceTopic: PROMPTS,
        sourcePartition: 1,
        sourceOffset: '7',
        service: 'engram-segmenter',
        time: '2026-11-26T10:00:00.000Z',
      },
      { id: 'agent.prompts.v1.dlq:0:1', service: 'engram-replay', sourceOffset: '3' },
    ]);
    expect(formatListed(listed[0])).toContain(`from ${PROMPTS}[1]@7`);
    expect(await dlqList(embeddedDeadLetters(log), 'memory.episodes.v1')).toEqual([]);
    expect(await dlqList(embeddedDeadLetters(log), PROMPTS)).toHaveLength(2);
  });

  it('should show one with its headers and the payload redacted', async () => {
    const shown = await dlqShow(embeddedDeadLetters(log), 'agent.prompts.v1.dlq:0:0');
    expect(shown).not.toBeNull();
    expect(shown!.headers['engram.service']).toBe('engram-segmenter');
    expect(shown!.key).toBe('sess-1');
    expect(shown!.payload.text).toContain('"eventId":"e-1"');
    expect(shown!.payload.text).not.toContain(SECRET);
    expect(formatShown(shown!)).not.toContain(SECRET);
    expect(await dlqShow(embeddedDeadLetters(log), 'agent.prompts.v1.dlq:0:9')).toBeNull();
    expect(await dlqShow(embeddedDeadLetters(log), 'nonsense')).toBeNull();
  });

  it('should redrive to the source topic once, mark it, and skip replay lines', async () => {
    const store = embeddedDeadLetters(log);
    expect(await dlqRedrive(store, { all: true })).toEqual([
      { id: 'agent.prompts.v1.dlq:0:0', outcome: 'redriven', to: PROMPTS },
    ]);
    expect(await dlqRedrive(store, { ids: ['agent.prompts.v1.dlq:0:1'] })).toMatchObject([
      { outcome: 'skipped', reason: expect.stringMatching(/replay it/) as string },
    ]);
    const republished = [...log.replay(PROMPTS)];
    expect(republished).toHaveLength(1);
    expect(republished[0].key).toBe('sess-1');
    expect(String(republished[0].value)).toContain(SECRET.slice(0, 4)); // as it was
    // Idempotent: by id, or --all (which only takes the ones not redriven yet).
    expect(await dlqRedrive(store, { ids: ['agent.prompts.v1.dlq:0:0'] })).toMatchObject([
      { outcome: 'already' },
    ]);
    expect(await dlqRedrive(store, { all: true })).toEqual([]);
    expect([...log.replay(PROMPTS)]).toHaveLength(1);
    expect((await dlqList(store)).map((entry) => entry.redriven)).toEqual([true, false]);
  });
});
