/**
 * The public topic-shift data of ../shared/datasets as segmentation sessions: each dialogue is one
 * session of PromptSubmitted lines (what `engram segment` reads) with a gold label per line.
 *
 * - TIAGE (`tiage/anno_{train,dev}.json`): every utterance of both speakers (there is no speaker
 *   field); label "1" = the utterance starts a topic shift, "-1" = the first utterance.
 * - SGD (`sgd-train/dialogues_NNN.json`): user turns only; a domain switch when the set of
 *   `frames[].service` differs from the previous user turn's, an intent switch when the set of
 *   (service, state.active_intent) pairs differs.
 *
 * Prompts are one minute apart on an implicit channel, so no thread timeout interferes: the text
 * alone decides, as for an external evaluator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GoldLabel } from '../../segmentation/types';

/** One labelled dialogue: utterances in order and, for each, whether it opens a segment. */
export interface LabelledDialogue {
  id: string;
  texts: string[];
  /** Same length as `texts`; index 0 is always true (a session opens a segment). */
  boundaries: boolean[];
}

/** Dialogues as `engram segment` input plus the gold labels the evaluator matches by eventId. */
export interface SegmentationSet {
  name: string;
  dialogues: number;
  prompts: string[];
  labels: GoldLabel[];
}

type TiageFile = Record<string, Array<[string, string]>>;

/** TIAGE dialogues of one split file, in the file's order. */
export function parseTiage(json: string): LabelledDialogue[] {
  const data = JSON.parse(json) as TiageFile;
  return Object.entries(data).map(([id, turns]) => ({
    id,
    texts: turns.map(([text]) => text),
    boundaries: turns.map(([, label], index) => index === 0 || label === '1'),
  }));
}

export function loadTiage(datasetsDir: string, split: 'train' | 'dev'): LabelledDialogue[] {
  return parseTiage(readFileSync(join(datasetsDir, 'tiage', `anno_${split}.json`), 'utf8'));
}

interface SgdFrame {
  service: string;
  state?: { active_intent?: string };
}

interface SgdDialogue {
  dialogue_id: string;
  turns: Array<{ speaker: string; utterance: string; frames: SgdFrame[] }>;
}

export type SgdLabel = 'domain' | 'intent';

function frameKey(frames: readonly SgdFrame[], label: SgdLabel): string {
  const keys = frames.map((frame) =>
    label === 'domain' ? frame.service : `${frame.service}/${frame.state?.active_intent ?? 'NONE'}`,
  );
  return [...new Set(keys)].sort().join('|');
}

/** The user turns of SGD dialogues, labelled with domain or intent switches. */
export function parseSgd(json: string, label: SgdLabel): LabelledDialogue[] {
  const data = JSON.parse(json) as SgdDialogue[];
  return data.map((dialogue) => {
    const user = dialogue.turns.filter((turn) => turn.speaker === 'USER');
    const keys = user.map((turn) => frameKey(turn.frames, label));
    return {
      id: dialogue.dialogue_id,
      texts: user.map((turn) => turn.utterance),
      boundaries: keys.map((key, index) => index === 0 || key !== keys[index - 1]),
    };
  });
}

/**
 * SGD files used for tuning and for reporting (held out). Files 001–003 hold one-service
 * dialogues, 044–048 multi-service ones; each side gets both kinds.
 */
export const SGD_TUNING_FILES = ['001', '044', '045', '046'] as const;
export const SGD_DEV_FILES = ['002', '003', '047', '048'] as const;

export function loadSgd(
  datasetsDir: string,
  files: readonly string[],
  label: SgdLabel,
): LabelledDialogue[] {
  return files.flatMap((file) =>
    parseSgd(readFileSync(join(datasetsDir, 'sgd-train', `dialogues_${file}.json`), 'utf8'), label),
  );
}

const EPOCH = Date.UTC(2026, 0, 5, 9, 0, 0);
const MINUTE = 60_000;

/**
 * The dialogues as PromptSubmitted JSON lines (one session each, user prompts a minute apart on
 * an implicit channel, promptIds 1..n) and their gold labels. Ids are derived from the set name
 * and dialogue id, so every run feeds the same lines.
 */
export function toSegmentationSet(
  name: string,
  dialogues: readonly LabelledDialogue[],
): SegmentationSet {
  const prompts: string[] = [];
  const labels: GoldLabel[] = [];
  dialogues.forEach((dialogue, d) => {
    const sessionId = `${name}:${dialogue.id}`;
    dialogue.texts.forEach((text, index) => {
      const promptId = index + 1;
      const eventId = `${sessionId}:${promptId}`;
      prompts.push(
        JSON.stringify({
          eventId,
          tenantId: 'bench',
          projectId: name,
          sessionId,
          agentId: 'bench',
          userId: 'bench-user',
          timestamp: EPOCH + d * 24 * 60 * MINUTE + index * MINUTE,
          schemaVersion: 1,
          promptId,
          source: 'user',
          channel: 'chat',
          channelKind: 'implicit',
          explicitThreadId: null,
          text,
          methodology: null,
          methodologyPhase: null,
          workUnitRef: null,
          parentEpisodeId: null,
        }),
      );
      labels.push({ eventId, sessionId, promptId, goldBoundary: dialogue.boundaries[index] });
    });
  });
  return { name, dialogues: dialogues.length, prompts, labels };
}

/** Every prompt text of a set, for embedding ahead of a run. */
export function setTexts(set: SegmentationSet): string[] {
  return set.prompts.map((line) => (JSON.parse(line) as { text: string }).text);
}
