import type { Typed } from '@engram/contracts';
import { newHookSessionState } from '@engram/core';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { HookSessionStore } from './hook-session-store';
import { HookSpool, parseSpoolLines } from './hook-spool';

function prompt(n: number): Typed {
  return {
    type: 'PromptSubmitted',
    eventId: `e-${n}`,
    tenantId: 't',
    projectId: 'p',
    sessionId: 's',
    agentId: 'claude-code',
    userId: null,
    timestamp: 1_700_000_000_000 + n,
    schemaVersion: 1,
    promptId: n,
    source: 'user',
    channel: 'cli',
    channelKind: 'implicit',
    explicitThreadId: null,
    text: `prompt ${n}`,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
  };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-spool-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('HookSpool', () => {
  it('should drain what was appended, oldest first, and end empty', async () => {
    const spool = new HookSpool(dir);
    spool.append([prompt(1), prompt(2)]);
    spool.append([prompt(3)]);
    expect(spool.size()).toBe(3);
    const published: string[] = [];
    const result = await spool.drain((events) => {
      published.push(...events.map((event) => event.eventId));
      return Promise.resolve();
    });
    expect(result).toEqual({ status: 'drained', published: 3, rejected: 0 });
    expect(published).toEqual(['e-1', 'e-2', 'e-3']);
    expect(spool.isEmpty()).toBe(true);
  });

  it('should keep everything, in order, when publishing fails', async () => {
    const spool = new HookSpool(dir);
    spool.append([prompt(1), prompt(2)]);
    await expect(spool.drain(() => Promise.reject(new Error('log down')))).rejects.toThrow(
      'log down',
    );
    spool.append([prompt(3)]);
    const published: string[] = [];
    await spool.drain((events) => {
      published.push(...events.map((event) => event.eventId));
      return Promise.resolve();
    });
    expect(published).toEqual(['e-1', 'e-2', 'e-3']);
  });

  it('should not publish again the batches that went out before a failure', async () => {
    const spool = new HookSpool(dir);
    spool.append(Array.from({ length: 700 }, (_, i) => prompt(i + 1)));
    const published: string[] = [];
    let calls = 0;
    const flaky = (events: Typed[]) => {
      calls += 1;
      if (calls === 2) return Promise.reject(new Error('broker gone'));
      published.push(...events.map((event) => event.eventId));
      return Promise.resolve();
    };
    await expect(spool.drain(flaky)).rejects.toThrow('broker gone');
    expect(spool.size()).toBe(200);
    await spool.drain(flaky);
    expect(published).toHaveLength(700);
    expect(new Set(published).size).toBe(700);
    expect(published[0]).toBe('e-1');
    expect(published[699]).toBe('e-700');
  });

  it('should move unreadable lines to rejected.jsonl, never dropping them', async () => {
    const spool = new HookSpool(dir);
    spool.append([prompt(1)]);
    writeFileSync(spool.pendingPath, '{"torn": \n', { flag: 'a' });
    spool.append([prompt(2)]);
    const published: string[] = [];
    const result = await spool.drain((events) => {
      published.push(...events.map((event) => event.eventId));
      return Promise.resolve();
    });
    expect(result.rejected).toBe(1);
    expect(published).toEqual(['e-1', 'e-2']);
    expect(readFileSync(spool.rejectedPath, 'utf8')).toBe('{"torn": \n');
  });

  it('should let one process drain at a time, and break a stale lock', async () => {
    const spool = new HookSpool(dir, 1_000);
    spool.append([prompt(1)]);
    const lock = join(dir, '.drain.lock');
    writeFileSync(lock, '123 now\n');
    const publish = () => Promise.resolve();
    expect((await spool.drain(publish)).status).toBe('busy');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(await spool.drain(publish)).toMatchObject({ status: 'drained', published: 1 });
    expect(existsSync(lock)).toBe(false);
  });

  it('should read spooled lines back', () => {
    const { events, bad } = parseSpoolLines(`${JSON.stringify(prompt(1))}\n[1]\n{"type":"X"}\n\n`);
    expect(events.map((event) => event.eventId)).toEqual(['e-1']);
    expect(bad).toEqual(['[1]', '{"type":"X"}']);
  });
});

describe('HookSessionStore', () => {
  it('should keep counters between processes', () => {
    const store = new HookSessionStore(dir);
    const bump = () =>
      store.update('sess-1', (state) => ({
        state: { ...state, promptCount: state.promptCount + 1 },
        value: state.promptCount + 1,
      }));
    expect(bump().value).toBe(1);
    expect(new HookSessionStore(dir).read('sess-1').promptCount).toBe(1);
    expect(bump()).toEqual({ value: 2, warning: null });
  });

  it('should hash session ids that are not safe file names', () => {
    const store = new HookSessionStore(dir);
    expect(store.pathOf('../../etc/passwd')).not.toContain('..');
    expect(store.pathOf('abc-123')).toMatch(/abc-123\.json$/);
  });

  it('should never update without the lock: a lock held past the wait stores nothing', () => {
    // Issue 19 finding 3: the old lock file was waited for 150 ms, then the state was "updated
    // without the lock", so two parallel tool calls got the same stepIndex and eventId.
    const store = new HookSessionStore(dir, { lockWaitMs: 20 });
    store.update('s', (state) => ({ state: { ...state, stepCount: 7 }, value: null }));
    const holder = new BetterSqlite3(join(store.dir, '.lock.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const { value, warning } = store.update('s', (state, locked) => ({
        state: { ...state, stepCount: state.stepCount + 1 },
        value: { locked, step: state.stepCount + 1 },
      }));
      expect(value).toEqual({ locked: false, step: 8 });
      expect(warning).toContain('stayed locked');
      expect(store.read('s').stepCount).toBe(7);
    } finally {
      holder.exec('COMMIT');
      holder.close();
    }
    expect(store.update('s', (state, locked) => ({ state, value: locked }))).toEqual({
      value: true,
      warning: null,
    });
  });

  it('should keep the counters in a fallback dir when the data dir is a file, then merge back', () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const fallback = join(dir, 'fallback');
    const store = new HookSessionStore(join(file, 'spool'), { fallbackSpoolDirs: [fallback] });
    const bump = () =>
      store.update('s', (state) => ({
        state: { ...state, stepCount: state.stepCount + 1 },
        value: state.stepCount + 1,
      }));
    const first = bump();
    expect(first.value).toBe(1);
    expect(first.warning).toContain(`session state kept in ${join(fallback, 'sessions')}`);
    expect(bump().value).toBe(2);
    // The data dir works again: its store continues from the fallback's counters.
    const healed = new HookSessionStore(join(dir, 'spool'), { fallbackSpoolDirs: [fallback] });
    expect(
      healed.update('s', (state) => ({
        state: { ...state, stepCount: state.stepCount + 1 },
        value: state.stepCount + 1,
      })),
    ).toEqual({ value: 3, warning: null });
    expect(existsSync(join(fallback, 'sessions', 's.json'))).toBe(false);
  });

  it('should prune old sessions only', () => {
    const store = new HookSessionStore(dir);
    store.update('old', () => ({ state: newHookSessionState(), value: null }));
    store.update('new', () => ({ state: newHookSessionState(), value: null }));
    const old = new Date(Date.now() - 10_000);
    utimesSync(store.pathOf('old'), old, old);
    expect(store.prune(5_000)).toBe(1);
    expect(existsSync(store.pathOf('new'))).toBe(true);
  });
});
