import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RANKING_CONFIG } from '../retrieval/ranking-config';
import { presentMemory } from '../retrieval/stale';
import { memory, NOW } from '../retrieval/testing/fixtures';
import {
  isSuperseded,
  resolveSupersession,
  SUPERSEDED_BY_TAG,
  SUPERSEDED_PREFIX,
  supersededBy,
  supersededVersion,
  SUPERSESSION_RULE,
  supersessionVerdict,
} from './supersession';

const DAY = 86_400_000;
const RULE = SUPERSESSION_RULE;

const decision = (
  memoryId: string,
  content: string,
  daysAgo: number,
  extra: Partial<Memory> = {},
) =>
  memory({
    memoryId,
    memoryType: 'decision',
    content,
    relatedFiles: [],
    createdAt: NOW - daysAgo * DAY,
    timestamp: NOW - daysAgo * DAY,
    ...extra,
  });

const REST = decision('rest', 'Billing talks to the ledger over REST with JSON bodies', 90);
const GRPC = decision(
  'grpc',
  'Billing no longer talks to the ledger over REST; it talks to the ledger over gRPC instead',
  2,
);
const RETRIES = decision(
  'retries',
  'Search retries calls to the orders service three times with exponential backoff',
  90,
);
const RETRY_LOGS = decision(
  'retry-logs',
  'Search logs every retried call to the orders service with the request id',
  2,
);

describe('supersessionVerdict', () => {
  it('should let a newer contradicting memory about the same subject supersede the older', () => {
    expect(supersessionVerdict(GRPC, REST, RULE)).toMatchObject({ supersedes: true });
  });

  it('should recognise a swapped dependency, a replaced convention and a negated gotcha', () => {
    const axios = decision('axios', 'Orders uses axios for HTTP requests', 90);
    const undici = decision(
      'undici',
      'Orders now uses undici instead of axios for HTTP requests',
      1,
    );
    expect(supersessionVerdict(undici, axios, RULE).supersedes).toBe(true);
    const lockFile = {
      relatedFiles: ['src/billing/invoice-numbering.ts'],
      memoryType: 'gotcha' as const,
    };
    const locked = decision(
      'locked',
      'Invoice numbering in billing must hold the advisory lock',
      90,
      lockFile,
    );
    const unlocked = decision(
      'unlocked',
      'Invoice numbering in billing does not need the advisory lock: the queue serialises it',
      1,
      lockFile,
    );
    expect(supersessionVerdict(unlocked, locked, RULE)).toMatchObject({
      supersedes: true,
      cue: 'negation',
    });
  });

  it('should take a choice restated with a new multi-word ending and no cue', () => {
    const table = decision('table', 'Billing talks to the ledger over a shared Postgres table', 1);
    expect(supersessionVerdict(table, REST, RULE)).toMatchObject({
      supersedes: true,
      cue: 'restatement',
    });
    const kafka = decision('kafka', 'Billing talks to the ledger over a Kafka topic', 0.5);
    expect(supersessionVerdict(kafka, table, RULE)).toMatchObject({ cue: 'restatement' });
    const tests = decision(
      'tests',
      'Convention for unit tests: live next to the source as *.spec.ts',
      9,
    );
    const moved = decision(
      'moved',
      'Convention for unit tests: go under test/unit, mirroring the source tree',
      1,
    );
    expect(supersessionVerdict(moved, tests, RULE)).toMatchObject({ cue: 'restatement' });
    // The value between its marker and a shared ending ("got" is a stop word: overlap misses it).
    const got = decision('got', 'Orders uses got for HTTP requests', 9);
    const fetch = decision('fetch', 'Orders uses node-fetch for HTTP requests', 1);
    expect(supersessionVerdict(fetch, got, RULE)).toMatchObject({ cue: 'restatement' });
    const winston = decision('winston', 'Auth uses winston for logging', 9);
    const pino = decision('pino', 'Auth uses pino for logging', 1);
    expect(supersessionVerdict(pino, winston, RULE)).toMatchObject({ cue: 'restatement' });
  });

  it('should not take a new ending for a restatement when it is an addition or not a choice', () => {
    // The older sentence continued: an elaboration, both true.
    const more = decision(
      'more',
      'Billing talks to the ledger over REST with JSON bodies and retries twice',
      1,
    );
    expect(supersessionVerdict(more, REST, RULE).supersedes).toBe(false);
    // No slot marker: two facts about the same subject, both true.
    const retries = decision('r', 'Billing retries failed ledger webhooks three times', 90);
    const only = decision('o', 'Billing retries failed ledger webhooks only for 5xx responses', 1);
    expect(supersessionVerdict(only, retries, RULE).supersedes).toBe(false);
    // A different value before the marker: another subject.
    const ledger = decision('l', 'Billing sends refunds to the ledger over a Kafka topic', 90);
    const stock = decision('s', 'Billing sends refunds to the stock service over a Kafka topic', 1);
    expect(supersessionVerdict(stock, ledger, RULE)).toMatchObject({ supersedes: false });
    // Too little shared opening to be the same statement.
    const short = decision('short', 'Billing uses a shared Postgres table', 1);
    const old = decision('old', 'Billing uses REST with JSON bodies', 90);
    expect(supersessionVerdict(short, old, RULE).supersedes).toBe(false);
    // Not a choice: a gotcha restated is two observations, not a reversal.
    const gotcha = { ...REST, memoryType: 'gotcha' as const };
    const gotchaNew = decision('g', 'Billing talks to the ledger over a shared Postgres table', 1, {
      memoryType: 'gotcha',
    });
    expect(supersessionVerdict(gotchaNew, gotcha, RULE).supersedes).toBe(false);
  });

  it('should leave a compatible newer fact about the same subject alone', () => {
    expect(supersessionVerdict(RETRY_LOGS, RETRIES, RULE)).toEqual({
      supersedes: false,
      reason: 'no contradiction',
    });
  });

  it('should need the same type, project, related files and subject', () => {
    const gotcha = { ...GRPC, memoryType: 'gotcha' as const };
    expect(supersessionVerdict(gotcha, REST, RULE)).toMatchObject({ reason: 'type' });
    expect(supersessionVerdict({ ...GRPC, projectId: 'other' }, REST, RULE)).toMatchObject({
      reason: 'scope',
    });
    const a = { ...REST, relatedFiles: ['src/billing/a.ts'] };
    const b = { ...GRPC, relatedFiles: ['src/billing/b.ts'] };
    expect(supersessionVerdict(b, a, RULE)).toMatchObject({ reason: 'files' });
    const other = decision(
      'other',
      'Search no longer caches facets in Redis; it uses memory instead',
      1,
    );
    expect(supersessionVerdict(other, REST, RULE)).toMatchObject({ reason: 'subject' });
  });

  it('should never let the older or a same-time memory supersede (no cycle)', () => {
    expect(supersessionVerdict(REST, GRPC, RULE)).toMatchObject({ reason: 'not newer' });
    const sameTime = { ...GRPC, createdAt: REST.createdAt };
    expect(supersessionVerdict(sameTime, REST, RULE).supersedes).toBe(false);
    expect(supersessionVerdict(REST, sameTime, RULE).supersedes).toBe(false);
  });
});

describe('supersededVersion', () => {
  it('should demote the older memory without deleting it, once', () => {
    const demoted = supersededVersion(REST, GRPC)!;
    expect(demoted).toMatchObject({
      memoryId: REST.memoryId,
      content: REST.content,
      staleAt: GRPC.createdAt,
      tags: [...REST.tags, `${SUPERSEDED_BY_TAG}grpc`],
    });
    expect(demoted.eventId).not.toBe(REST.eventId);
    expect(isSuperseded(demoted)).toBe(true);
    expect(supersededBy(demoted)).toBe('grpc');
    expect(supersededVersion(demoted, GRPC)).toBeNull();
  });

  it('should be shown with the superseded prefix and the stale penalty', () => {
    const shown = presentMemory(supersededVersion(REST, GRPC)!, DEFAULT_RANKING_CONFIG.stale);
    expect(shown.stale).toBe(true);
    expect(shown.content).toBe(`${SUPERSEDED_PREFIX} ${REST.content}`);
    expect(shown.confidence).toBeCloseTo(REST.confidence * DEFAULT_RANKING_CONFIG.stale.penalty);
  });
});

describe('resolveSupersession', () => {
  it('should demote the older candidate and give the newer memory its relation', () => {
    const outcome = resolveSupersession(GRPC, [REST, RETRIES], RULE);
    expect(outcome.memory.relations).toEqual([
      {
        targetMemoryId: 'rest',
        targetFilePath: null,
        relationType: 'supersedes',
        confidence: RULE.relationConfidence,
        autoExtracted: true,
      },
    ]);
    expect(outcome.updated.map((m) => [m.memoryId, supersededBy(m)])).toEqual([['rest', 'grpc']]);
  });

  it('should give the same result whichever of the two arrives first', () => {
    const older = resolveSupersession(REST, [GRPC], RULE);
    expect(supersededBy(older.memory)).toBe('grpc');
    expect(older.updated.map((m) => m.relations.map((r) => r.targetMemoryId))).toEqual([['rest']]);
  });

  it('should be idempotent: resolving again against the written versions changes nothing', () => {
    const first = resolveSupersession(GRPC, [REST], RULE);
    const again = resolveSupersession(first.memory, first.updated, RULE);
    expect(again.memory).toBe(first.memory);
    expect(again.updated).toEqual([]);
    // The log's version of the newer one (without the relation) gets it back from the tag.
    const replayed = resolveSupersession(GRPC, first.updated, RULE);
    expect(replayed.memory.relations).toEqual(first.memory.relations);
    expect(replayed.updated).toEqual([]);
  });

  it('should supersede along a chain without cycles: each memory by the next one only', () => {
    const kafka = decision(
      'kafka',
      'Billing switched from gRPC to a Kafka topic to talk to the ledger, no longer gRPC',
      1,
    );
    const rest = supersededVersion(REST, GRPC)!;
    const outcome = resolveSupersession(kafka, [rest, GRPC], RULE);
    expect(outcome.updated.map((m) => [m.memoryId, supersededBy(m)])).toEqual([['grpc', 'kafka']]);
    expect(outcome.memory.relations.map((r) => r.targetMemoryId)).toEqual(['grpc']);
    expect(isSuperseded(outcome.memory)).toBe(false);
  });

  it('should leave a compatible newer fact and its older neighbour as they are', () => {
    const outcome = resolveSupersession(RETRY_LOGS, [RETRIES], RULE);
    expect(outcome.memory).toBe(RETRY_LOGS);
    expect(outcome.updated).toEqual([]);
  });
});
