/**
 * A seeded synthetic repository for file prediction: 10 modules of 8 files, each module with
 * 3 tasks (a group of 2–3 files changed together), and 3 shared files (a config, an index, a
 * test helper) that many sessions touch. A session works on one task of one module: it reads the
 * task's files and some other files of the module in a random order, sometimes a shared file or
 * a file of another module, and edits the task's files. What a predictor can learn: the task's
 * files go together (co-access), the shared files are popular (frequency), the module's files
 * come more often than others.
 */
import { random } from '../../../../apps/engram/src/commands/bench-observe';
import type { BenchCall, BenchSession } from './sessions';

const MODULES = 10;
const FILES_PER_MODULE = 8;
const SHARED = ['package.json', 'src/index.ts', 'test/helpers.ts'];
const T0 = Date.UTC(2025, 0, 1);

const fileOf = (module: number, index: number) => `src/m${module}/f${index}.ts`;

/** The task groups of a module: files [0,1,2], [3,4], [5,6]; file 7 belongs to none. */
const TASKS: readonly number[][] = [
  [0, 1, 2],
  [3, 4],
  [5, 6],
];

export function syntheticSessions(count: number, seed = 23): BenchSession[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  return Array.from({ length: count }, (_, s) => {
    // Modules are not equally busy: module m is chosen with weight 1 / (m + 1).
    const weights = Array.from({ length: MODULES }, (_, m) => 1 / (m + 1));
    let roll = next() * weights.reduce((a, b) => a + b, 0);
    let module = 0;
    while (roll > weights[module]) roll -= weights[module++];
    const task = pick(TASKS).map((i) => fileOf(module, i));
    const files: { path: string; edit: boolean }[] = [];
    for (const path of task) files.push({ path, edit: false });
    const extra = 1 + Math.floor(next() * 3);
    for (let i = 0; i < extra; i += 1) {
      files.push({ path: fileOf(module, Math.floor(next() * FILES_PER_MODULE)), edit: false });
    }
    if (next() < 0.5) files.push({ path: pick(SHARED), edit: false });
    if (next() < 0.2) {
      files.push({
        path: fileOf(Math.floor(next() * MODULES), Math.floor(next() * FILES_PER_MODULE)),
        edit: false,
      });
    }
    // Shuffle the reads, then edit the task's files.
    for (let i = files.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [files[i], files[j]] = [files[j], files[i]];
    }
    for (const path of task) if (next() < 0.8) files.push({ path, edit: true });
    const start = T0 + s * 3_600_000;
    const calls: BenchCall[] = [];
    for (const file of files) {
      if (next() < 0.3) {
        calls.push({
          step: calls.length,
          promptId: 1,
          toolName: 'Bash',
          filePaths: [],
          touches: false,
          outcome: 'ok',
          at: 0,
        });
      }
      calls.push({
        step: calls.length,
        promptId: 1,
        toolName: file.edit ? 'Edit' : 'Read',
        filePaths: [file.path],
        touches: true,
        outcome: 'ok',
        at: 0,
      });
    }
    calls.forEach((call, i) => (call.at = start + i * 5_000));
    return {
      dataset: 'synthetic',
      projectId: 'synthetic/repo',
      sessionId: `synthetic:${s}`,
      source: `session ${s}`,
      queried: true,
      calls,
    };
  });
}
