import { COMPRESS_STATE_ABOVE_BYTES } from '@engram/core';
import { newDetectorState, type Scratchpad } from '@engram/core';
import { describe, expect, it } from 'vitest';
import {
  decodeRecord,
  encodeRecord,
  type ScratchpadRecord,
  type SessionRecord,
} from './observer-records';
import { emptyFacts } from './session-facts';

const session: SessionRecord = {
  v: 1,
  kind: 'session',
  sessionId: 's1',
  partition: 2,
  tenantId: 'acme',
  projectId: 'acme/api',
  agentId: 'claude-code',
  startedAt: null,
  lastActivityAt: 0,
  endedAt: null,
  detector: newDetectorState({ tenantId: 'acme', projectId: 'acme/api', sessionId: 's1' }, null),
  facts: emptyFacts(),
  pending: [],
  scratchpadId: 'pad-1',
};

describe('observer changelog records', () => {
  it('should keep small records as readable JSON', () => {
    const bytes = encodeRecord(session);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(session);
    expect(decodeRecord(bytes)).toEqual(session);
  });

  it('should gzip large records far below the broker limit, and read them back', () => {
    const notes = Array.from({ length: 5_000 }, (_, i) => ({
      eventId: `note-${i}`,
      sessionId: 's1',
      at: i,
      text: `remember that src/module-${i % 40}/file.ts needs the migration first`,
      memoryType: null,
      relatedFiles: [`src/module-${i % 40}/file.ts`],
    }));
    const pad = { segments: [{ notes }] } as unknown as Scratchpad;
    const record: ScratchpadRecord = { v: 1, kind: 'scratchpad', partition: 0, pad };
    const json = JSON.stringify(record).length;
    const bytes = encodeRecord(record);
    expect(json).toBeGreaterThan(COMPRESS_STATE_ABOVE_BYTES);
    expect(bytes.length).toBeLessThan(json / 5);
    expect(decodeRecord(bytes)).toEqual(record);
  });
});
