/**
 * A long-term conversational-memory dev set in the style of LoCoMo, built at run time from the
 * public Schema-Guided Dialogue files (../shared/datasets/sgd-train) and TIAGE chit-chat: several
 * dialogues of varied services form one person's history (a project, one session per dialogue,
 * days apart, with chit-chat sessions between them as distractors). Questions ask for a fact the
 * person stated (a slot value) and name it by the schema's description, never by its value; the
 * gold evidence is the user turn(s) that stated it. Most questions name the dialogue by an entity
 * stated in another turn ("… for Sushi Ran?" while the time was given two turns later), so a
 * recall that only matches single turns cannot answer them. Deterministic: the same files give
 * the same set.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface SgdSlotSpan {
  slot: string;
  start: number;
  exclusive_end: number;
}
interface SgdFrame {
  service: string;
  slots: SgdSlotSpan[];
  state?: { active_intent: string; slot_values: Record<string, string[]> };
}
interface SgdTurn {
  speaker: 'USER' | 'SYSTEM';
  utterance: string;
  frames: SgdFrame[];
}
interface SgdDialogue {
  dialogue_id: string;
  services: string[];
  turns: SgdTurn[];
}
interface SgdSchema {
  service_name: string;
  slots: { name: string; description: string; is_categorical: boolean }[];
  intents: { name: string; description: string }[];
}

/** One replayed user turn and where it is. */
export interface BenchTurn {
  eventId: string;
  sessionId: string;
  promptId: number;
  text: string;
  timestamp: number;
}

export type QuestionKind = 'cross-turn' | 'same-turn' | 'by-intent';

export interface BenchQuestion {
  id: string;
  projectId: string;
  query: string;
  kind: QuestionKind;
  /** eventIds of the user turns that stated the answer. */
  evidence: string[];
}

export interface RecallDevSet {
  tenantId: string;
  /** JSON lines for `engram replay` (SessionStarted, PromptSubmitted…, SessionEnded). */
  events: string;
  /** Every replayed user turn by project (the BM25 baseline's corpus). */
  turns: Map<string, BenchTurn[]>;
  questions: BenchQuestion[];
}

export interface RecallDevSetOptions {
  users: number;
  dialoguesPerUser: number;
  chitChatPerUser: number;
  questionsPerDialogue: number;
  seed: number;
}

/** Every SGD file there is: the recall set needs the variety of services (7 in all). */
export const SGD_RECALL_FILES = ['001', '002', '003', '044', '045', '046', '047', '048'] as const;
const TENANT = 'bench';
const DAY = 24 * 60 * 60 * 1000;
const START = Date.UTC(2025, 0, 6, 9, 0, 0);

/** mulberry32: a small deterministic PRNG. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A uuid-shaped id derived from a name (stable across runs). */
export function stableUuid(name: string): string {
  const h = createHash('sha1').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A fact a user stated: slot, value, the user turn (index among the dialogue's user turns). */
interface StatedFact {
  service: string;
  intent: string;
  slot: string;
  value: string;
  userTurn: number;
  /** Stated by a span (a free-text value such as a name or a time). */
  span: boolean;
}

const UNINFORMATIVE = new Set(['true', 'false', 'dontcare', '1']);

/** Facts each user turn stated: span values, and categorical values said in words. */
export function statedFacts(dialogue: SgdDialogue): StatedFact[] {
  const facts: StatedFact[] = [];
  const seen = new Set<string>();
  dialogue.turns
    .filter((turn) => turn.speaker === 'USER')
    .forEach((turn, userTurn) => {
      const lower = turn.utterance.toLowerCase();
      for (const frame of turn.frames) {
        const intent = frame.state?.active_intent ?? 'NONE';
        const spans = frame.slots.map((s) => ({
          slot: s.slot,
          value: turn.utterance.slice(s.start, s.exclusive_end),
          span: true,
        }));
        const said = Object.entries(frame.state?.slot_values ?? {}).flatMap(([slot, values]) =>
          values
            .filter((v) => v.length > 1 && lower.includes(v.toLowerCase()))
            .map((value) => ({ slot, value, span: false })),
        );
        for (const { slot, value, span } of [...spans, ...said]) {
          const key = `${frame.service}|${slot}|${value.toLowerCase()}`;
          if (seen.has(key) || UNINFORMATIVE.has(value.toLowerCase())) continue;
          seen.add(key);
          facts.push({ service: frame.service, intent, slot, value, userTurn, span });
        }
      }
    });
  return facts;
}

function lowerFirst(text: string): string {
  const trimmed = text.trim().replace(/\.$/, '');
  return trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
}

const ANCHOR_SLOTS =
  /name|city|location|destination|area|origin|to_|from_|address|title|artist|album|event|restaurant|hotel|movie|song|attraction|category|cuisine|airline|venue|doctor|dentist|stylist|recipient|therapist|where_to|pickup|subcategory|genre|place/;

const CROSS_TEMPLATES = [
  (slot: string, anchor: string) => `What ${slot} did I give for ${anchor}?`,
  (slot: string, anchor: string) => `When we talked about ${anchor}, which ${slot} did I want?`,
  (slot: string, anchor: string) => `Remind me: the ${slot} I mentioned around ${anchor}?`,
];
const INTENT_TEMPLATES = [
  (slot: string, intent: string) => `What ${slot} did I ask for when I wanted to ${intent}?`,
  (slot: string, intent: string) => `Which ${slot} was it, the time I needed to ${intent}?`,
];

/** The dev set: `users` histories, each its own project. */
export function buildRecallDevSet(datasetsDir: string, options: RecallDevSetOptions): RecallDevSet {
  const random = prng(options.seed);
  const dir = join(datasetsDir, 'sgd-train');
  const schema = JSON.parse(readFileSync(join(dir, 'schema.json'), 'utf8')) as SgdSchema[];
  const services = new Map(schema.map((s) => [s.service_name, s]));
  const pool = shuffled(
    SGD_RECALL_FILES.flatMap(
      (file) =>
        JSON.parse(readFileSync(join(dir, `dialogues_${file}.json`), 'utf8')) as SgdDialogue[],
    ),
    random,
  );
  const tiage = Object.entries(
    JSON.parse(readFileSync(join(datasetsDir, 'tiage', 'anno_dev.json'), 'utf8')) as Record<
      string,
      [string, string][]
    >,
  ).sort(([a], [b]) => a.localeCompare(b));
  const events: string[] = [];
  const turns = new Map<string, BenchTurn[]>();
  const questions: BenchQuestion[] = [];
  let nextChat = 0;
  for (let user = 0; user < options.users; user += 1) {
    const projectId = `sgd-user-${user + 1}`;
    // Varied services: at most two dialogues of one (first) service per history.
    const chosen: SgdDialogue[] = [];
    const perService = new Map<string, number>();
    for (let i = 0; i < pool.length && chosen.length < options.dialoguesPerUser;) {
      const main = pool[i].services[0];
      if ((perService.get(main) ?? 0) >= 2) {
        i += 1;
        continue;
      }
      perService.set(main, (perService.get(main) ?? 0) + 1);
      chosen.push(...pool.splice(i, 1));
    }
    const sessions: { id: string; texts: string[]; dialogue: SgdDialogue | null }[] = chosen.map(
      (dialogue) => ({
        id: `${projectId}/${dialogue.dialogue_id}`,
        texts: dialogue.turns.filter((t) => t.speaker === 'USER').map((t) => t.utterance),
        dialogue,
      }),
    );
    for (let c = 0; c < options.chitChatPerUser && tiage.length > 0; c += 1) {
      const [id, utterances] = tiage[nextChat++ % tiage.length];
      const at = Math.floor(random() * (sessions.length + 1));
      sessions.splice(at, 0, {
        id: `${projectId}/chat-${id}`,
        texts: utterances.map(([text]) => text),
        dialogue: null,
      });
    }
    const projectTurns: BenchTurn[] = [];
    sessions.forEach((session, s) => {
      const startedAt = START + s * 3 * DAY + Math.floor(random() * 8) * 60 * 60 * 1000;
      const base = {
        tenantId: TENANT,
        projectId,
        sessionId: session.id,
        agentId: 'assistant',
        userId: `user-${user + 1}`,
      };
      events.push(
        JSON.stringify({
          type: 'SessionStarted',
          eventId: stableUuid(`${session.id}/start`),
          ...base,
          timestamp: startedAt,
          agentKind: 'claude-code',
          gitBranch: null,
          gitHeadSha: null,
          methodology: null,
          workUnitRef: null,
        }),
      );
      const sessionTurns = session.texts.map((text, i) => ({
        eventId: stableUuid(`${session.id}/${i}`),
        sessionId: session.id,
        promptId: i + 1,
        text,
        timestamp: startedAt + (i + 1) * 60_000,
      }));
      for (const turn of sessionTurns) {
        events.push(
          JSON.stringify({
            type: 'PromptSubmitted',
            eventId: turn.eventId,
            ...base,
            timestamp: turn.timestamp,
            promptId: turn.promptId,
            source: 'user',
            channel: 'cli',
            channelKind: 'explicit',
            explicitThreadId: session.id,
            text: turn.text,
          }),
        );
      }
      const endedAt = startedAt + (session.texts.length + 2) * 60_000;
      events.push(
        JSON.stringify({
          type: 'SessionEnded',
          eventId: stableUuid(`${session.id}/end`),
          ...base,
          timestamp: endedAt,
          userMessageCount: session.texts.length,
          durationS: Math.round((endedAt - startedAt) / 1000),
          reason: 'exit',
        }),
      );
      projectTurns.push(...sessionTurns);
      if (session.dialogue) {
        questions.push(
          ...dialogueQuestions(
            session.dialogue,
            sessionTurns,
            projectId,
            services,
            random,
            chosen.filter((d) => d.services.some((x) => session.dialogue!.services.includes(x)))
              .length === 1,
          ).slice(0, options.questionsPerDialogue),
        );
      }
    });
    turns.set(projectId, projectTurns);
  }
  return { tenantId: TENANT, events: `${events.join('\n')}\n`, turns, questions };
}

function dialogueQuestions(
  dialogue: SgdDialogue,
  sessionTurns: BenchTurn[],
  projectId: string,
  services: Map<string, SgdSchema>,
  random: () => number,
  /** No other dialogue of this history has the service: naming the intent says which one. */
  uniqueService: boolean,
): BenchQuestion[] {
  const facts = statedFacts(dialogue);
  const out: BenchQuestion[] = [];
  const asked = new Set<string>();
  for (const fact of shuffled(facts, random)) {
    const schema = services.get(fact.service);
    const slot = schema?.slots.find((s) => s.name === fact.slot);
    if (!schema || !slot || asked.has(fact.slot)) continue;
    const evidence = facts
      .filter((f) => f.slot === fact.slot && f.value.toLowerCase() === fact.value.toLowerCase())
      .map((f) => sessionTurns[f.userTurn].eventId);
    const anchors = facts.filter(
      (f) =>
        f.span &&
        f.service === fact.service &&
        f.slot !== fact.slot &&
        ANCHOR_SLOTS.test(f.slot) &&
        !f.value.toLowerCase().includes(fact.value.toLowerCase()) &&
        !fact.value.toLowerCase().includes(f.value.toLowerCase()),
    );
    const slotText = lowerFirst(slot.description);
    const id = `${projectId}/${dialogue.dialogue_id}/${fact.slot}`;
    if (anchors.length > 0) {
      const anchor = anchors[Math.floor(random() * anchors.length)];
      const template = CROSS_TEMPLATES[Math.floor(random() * CROSS_TEMPLATES.length)];
      out.push({
        id,
        projectId,
        query: template(slotText, anchor.value),
        kind: anchor.userTurn === fact.userTurn ? 'same-turn' : 'cross-turn',
        evidence: [...new Set(evidence)],
      });
    } else if (uniqueService) {
      const intent = schema.intents.find((i) => i.name === fact.intent);
      if (!intent) continue;
      const template = INTENT_TEMPLATES[Math.floor(random() * INTENT_TEMPLATES.length)];
      out.push({
        id,
        projectId,
        query: template(slotText, lowerFirst(intent.description)),
        kind: 'by-intent',
        evidence: [...new Set(evidence)],
      });
    }
    asked.add(fact.slot);
  }
  return out;
}
