import { SqliteEventLog, type AppendRecord } from '@engram/embedded';
import {
  DECOYS,
  PLANTED,
  type CallFields,
  type Decoy,
  type Planted,
} from './bench-friction-plants';
import { Rng, WORDS } from './bench-friction-rng';
import { frictionTopics } from './friction-report.command';

/**
 * The organisation `engram bench friction` reports on: developers × weeks × sessions of their
 * agents (prompts, tool calls, session starts and ends) written straight into an embedded
 * events.db, with the planted frictions and decoys of bench-friction-plants.ts among the noise.
 */

/** How big the generated organisation is. */
export interface OrganisationShape {
  developers: number;
  weeks: number;
  /** Sessions per developer per working day. */
  sessionsPerDay: number;
  /** Events per session (about). */
  eventsPerSession: number;
}

export const TENANT = 'org';
export const PROJECTS = 10;
export const DAY = 86_400_000;
/** A Monday: the generated weeks start here. */
export const START = Date.UTC(2026, 9, 5, 8);

interface Batch {
  prompts: AppendRecord[];
  toolCalls: AppendRecord[];
  lifecycle: AppendRecord[];
}

/** Writes the organisation into `dataDir`; returns the number of sessions and events. */
export function generateOrganisation(
  dataDir: string,
  options: OrganisationShape,
): { sessions: number; events: number } {
  const topics = frictionTopics('');
  const log = SqliteEventLog.open({ dataDir });
  for (const topic of [topics.prompts, topics.toolCalls, topics.lifecycle]) {
    log.ensureTopic(topic, 4);
  }
  const rng = new Rng(42);
  // Decoys planted in a fixed number of sessions: how many each has left.
  const left = new Map(DECOYS.map((d) => [d, d.sessions ?? 0]));
  const decoyDue = (decoy: Decoy, r: Rng): boolean => {
    if (decoy.share !== undefined) return r.next() < decoy.share;
    const remaining = left.get(decoy) ?? 0;
    left.set(decoy, remaining - 1);
    return remaining > 0;
  };
  let sessions = 0;
  let events = 0;
  let eventSeq = 0;
  let batch: Batch = { prompts: [], toolCalls: [], lifecycle: [] };
  const flush = () => {
    log.transaction(() => {
      log.append(topics.prompts, batch.prompts);
      log.append(topics.toolCalls, batch.toolCalls);
      log.append(topics.lifecycle, batch.lifecycle);
    });
    batch = { prompts: [], toolCalls: [], lifecycle: [] };
  };
  try {
    for (let week = 0; week < options.weeks; week += 1) {
      for (let weekday = 0; weekday < 5; weekday += 1) {
        for (let dev = 0; dev < options.developers; dev += 1) {
          for (let s = 0; s < options.sessionsPerDay; s += 1) {
            const project = `org/project-${(dev + (s % 2) * 3) % PROJECTS}`;
            const sessionId = `w${week}-d${weekday}-dev${dev}-s${s}`;
            const agentId = dev % 3 === 0 ? 'codex' : 'claude-code';
            let at = START + (week * 7 + weekday) * DAY + dev * 60_000 + s * 4 * 3_600_000;
            let promptId = 0;
            const envelope = () => {
              eventSeq += 1;
              at += 7_000;
              return {
                eventId: `ev-${eventSeq.toString(36).padStart(8, '0')}`,
                tenantId: TENANT,
                projectId: project,
                sessionId,
                agentId,
                userId: `dev-${dev}`,
                timestamp: at,
                schemaVersion: 1,
              };
            };
            const push = (list: AppendRecord[], event: Record<string, unknown>) => {
              list.push({ key: sessionId, value: JSON.stringify(event), timestamp: at });
              events += 1;
            };
            const userPrompt = (text: string) => {
              promptId += 1;
              push(batch.prompts, {
                type: 'PromptSubmitted',
                ...envelope(),
                promptId,
                source: 'user',
                channel: 'cli',
                channelKind: 'explicit',
                explicitThreadId: null,
                text,
                methodology: null,
                methodologyPhase: null,
                workUnitRef: null,
                parentEpisodeId: null,
              });
            };
            const toolCall = (step: number, fields: CallFields) =>
              push(batch.toolCalls, {
                type: 'ToolCallObserved',
                ...envelope(),
                promptId,
                stepIndex: step,
                toolName: 'Bash',
                filePaths: [],
                command: null,
                argsJson: '{}',
                outcome: 'ok',
                errorMessage: null,
                durationMs: 200 + rng.int(5_000),
                tokensUsed: rng.int(4) === 0 ? null : 100 + rng.int(2_000),
                mcp: false,
                ...fields,
              });
            push(batch.lifecycle, {
              type: 'SessionStarted',
              ...envelope(),
              source: 'startup',
              model: null,
              cwd: `/home/dev-${dev}/${project}`,
              gitBranch: null,
              gitSha: null,
            });
            const planted = PLANTED.filter((p) => p.project === project && rng.next() < p.share);
            const decoys = DECOYS.filter((d) => d.project === project && decoyDue(d, rng));
            const budget = options.eventsPerSession - 2;
            let written = 0;
            while (written < budget) {
              userPrompt(`${rng.pick(['fix', 'add', 'refactor', 'test'])} the ${rng.words(6)}`);
              written += 1;
              const calls = Math.min(budget - written, 5 + rng.int(12));
              for (let step = 0; step < calls; step += 1) {
                const kind = rng.int(10);
                const file = `src/${rng.pick(WORDS)}/${rng.pick(WORDS)}.ts`;
                if (kind < 5) toolCall(step, { toolName: 'Read', filePaths: [file] });
                else if (kind < 8) toolCall(step, { toolName: 'Edit', filePaths: [file] });
                else if (rng.int(12) === 0) {
                  // Noise: a one-off failure with an error of its own.
                  toolCall(step, {
                    command: `./scripts/${rng.words(1)}.sh`,
                    outcome: 'error',
                    errorMessage: `${rng.gibberish(2)} failed: ${rng.gibberish(3)}`,
                  });
                } else toolCall(step, { command: `npm run ${rng.pick(WORDS)}` });
              }
              written += calls;
              // Noise: a one-off correction about something else.
              if (rng.int(40) === 0) {
                userPrompt(`Actually, the ${rng.gibberish(2)} is not what I meant.`);
              }
            }
            for (const p of planted) writePlanted(p, { rng, userPrompt, toolCall });
            for (const decoy of decoys) {
              for (const turn of decoy.turns(rng)) {
                userPrompt(turn.prompt);
                turn.calls.forEach((fields, step) => toolCall(step, fields));
              }
            }
            push(batch.lifecycle, {
              type: 'SessionEnded',
              ...envelope(),
              userMessageCount: promptId,
              durationS: 3_600,
              reason: 'exit',
            });
            sessions += 1;
            if (batch.toolCalls.length >= 20_000) flush();
          }
        }
      }
    }
    flush();
  } finally {
    log.close();
  }
  return { sessions, events };
}

/** What a planted friction writes with: the session's randomness, prompts and tool calls. */
interface SessionWriter {
  rng: Rng;
  userPrompt: (text: string) => void;
  toolCall: (step: number, fields: CallFields) => void;
}

/** A planted friction's turn, at the end of a session. */
function writePlanted(p: Planted, { rng, userPrompt, toolCall }: SessionWriter): void {
  const failure = (step: number) =>
    toolCall(step, {
      command: p.command ?? null,
      outcome: 'error',
      errorMessage: p.error?.(rng) ?? 'failed',
      durationMs: 20_000 + rng.int(60_000),
    });
  switch (p.kind) {
    case 'repeated-correction':
      userPrompt(rng.pick(p.phrasings ?? []));
      return;
    case 'configuration-drift': {
      // Fails, is repaired by hand, then runs.
      userPrompt(`start ${p.command ?? ''}`);
      failure(0);
      const repair = p.repair ?? [];
      repair.forEach((fields, i) => toolCall(i + 1, fields));
      toolCall(repair.length + 1, { command: p.command ?? null });
      return;
    }
    case 'missing-skill':
      userPrompt(`do the ${p.marker} routine`);
      (p.recipe?.(rng) ?? []).forEach((fields, step) => toolCall(step, fields));
      return;
    case 'recurring-failure':
    case 'tool-misuse': {
      userPrompt(`run ${p.command ?? ''} again`);
      const attempts = p.kind === 'tool-misuse' ? 3 + rng.int(3) : 1;
      for (let step = 0; step < attempts; step += 1) failure(step);
    }
  }
}
