// Issue #19: a project's promotions are re-evaluated while they are among its latest
// MAX_RETAINED_REQUESTS, then frozen. The frozen versions read the statistics of whatever had
// arrived when they froze — batching, partitions and restarts, not the events — so a SIGKILLed
// run of the observer ended with other memories than an uninterrupted one (observer-crash test).
import type { LifecycleEvent, Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { MAX_RETAINED_REQUESTS } from './project-promotion.stage';
import {
  ACME,
  bash,
  edit,
  read,
  sessionCalls,
  sessionEnded,
  T0,
  type CallSpec,
} from './testing/observer-events';
import { pipeline } from './testing/promotion-pipeline';

const HOUR = 3_600_000;
const POOL = 'src/db/pool.ts';
const SCHEMA = 'src/db/schema.ts';
const TOKEN = 'src/auth/token.ts';
const SESSION = 'src/auth/session.ts';
/** Early sessions couple the pool with the schema; later ones with the token (another weight). */
const EARLY: CallSpec[] = [
  read(POOL, SCHEMA),
  bash('npm run migrate', 'relation "users" does not exist'),
  edit(SCHEMA),
];
const LATER: CallSpec[] = [read(TOKEN, SESSION), read(POOL), edit(TOKEN), bash('npm test')];
const EARLY_SESSIONS = 12;
const SESSIONS = MAX_RETAINED_REQUESTS + 24;

function sessionEvents(index: number) {
  const sessionId = `s${index}`;
  const at = T0 + index * HOUR;
  const calls = sessionCalls(ACME, sessionId, index < EARLY_SESSIONS ? EARLY : LATER, at);
  const lifecycle: LifecycleEvent[] = [sessionEnded(ACME, sessionId, at + 60_000)];
  return { calls, lifecycle };
}

/** A deterministic stand-in for the model: words hashed into 32 dimensions. */
const bagOfWords = {
  id: 'bag-of-words',
  embed: (texts: string[]) =>
    Promise.resolve(
      texts.map((text) => {
        const vector = new Float32Array(32);
        for (const word of text.split(/\W+/)) {
          let hash = 7;
          for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) % 32;
          vector[hash] += 1;
        }
        return vector;
      }),
    ),
};

/**
 * Runs every session through both stages; the project stage runs after every `promoteEvery`
 * sessions (and at the end). The memory topic's final content, by memoryId.
 */
async function finalMemories(promoteEvery: number, order: number[]): Promise<Map<string, Memory>> {
  const p = pipeline({ embedder: bagOfWords });
  let run = 0;
  for (const index of order) {
    const { calls, lifecycle } = sessionEvents(index);
    await p.calls(calls);
    await p.lifecycle(lifecycle);
    run += 1;
    if (run % promoteEvery === 0) await p.promote();
  }
  await p.promote();
  return new Map([...p.latest].sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe('promotions frozen out of the re-evaluated window (issue #19)', () => {
  const inOrder = [...Array(SESSIONS).keys()];

  it('should give the same final memories whatever the batches they froze in', async () => {
    const sessionBySession = await finalMemories(1, inOrder);
    const everyTenth = await finalMemories(10, inOrder);
    const allAtOnce = await finalMemories(SESSIONS, inOrder);
    // Two partitions: the odd sessions' is read 20 sessions behind the even sessions'.
    const even = inOrder.filter((i) => i % 2 === 0);
    const odd = inOrder.filter((i) => i % 2 === 1);
    const lagging = [...even.slice(0, 10), ...even.slice(10).flatMap((e, i) => [e, odd[i]])];
    lagging.push(...odd.slice(even.length - 10));
    const oddLagging = await finalMemories(7, lagging);
    expect(sessionBySession.size).toBeGreaterThan(2);
    for (const other of [everyTenth, allAtOnce, oddLagging]) {
      expect([...other.keys()]).toEqual([...sessionBySession.keys()]);
      expect([...other.values()]).toEqual([...sessionBySession.values()]);
    }
  }, 60_000);
});
