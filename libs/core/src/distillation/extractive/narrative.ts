import type { EpisodeAnnotation } from '../../segmentation/annotation';
import { intentKeywords, wordCount } from '../../segmentation/intent-keywords';
import { formatDuration } from '../time';
import { truncateChars } from '../tokens';
import { oneLine, type PromptEntry } from '../transcript';
import { listFiles } from './errors';

const TOPIC_WORDS = 4;

/** Path parts that name no topic (`src/auth/x.ts` is about auth, not about src). */
const PATH_NOISE: ReadonlySet<string> = new Set([
  'src',
  'lib',
  'libs',
  'app',
  'apps',
  'dist',
  'index',
  'main',
  'pkg',
  'packages',
]);
const INTENT_CHARS = 140;
const TITLE_CHARS = 72;

/**
 * The words a segment is about: the intent keywords (seed 000) of its user prompts, most frequent
 * first (then first seen), each shown in the first form the user wrote it ("refresh", not the
 * stem "refresh"; "configuration", not "configur").
 */
export function topicWords(userPrompts: readonly PromptEntry[], limit = TOPIC_WORDS): string[] {
  const counts = new Map<string, number>();
  const surface = new Map<string, string>();
  for (const prompt of userPrompts) {
    for (const token of prompt.text.split(/\s+/)) {
      const word = token.replace(/^[^\w./-]+|[^\w/]+$/g, '');
      for (const stem of intentKeywords(word)) {
        if (PATH_NOISE.has(stem) || stem.includes('.')) continue;
        counts.set(stem, (counts.get(stem) ?? 0) + 1);
        if (!surface.has(stem)) surface.set(stem, surfaceForm(word, stem));
      }
    }
  }
  return [...counts]
    .map(([stem, count], index) => ({ stem, count, index }))
    .sort((a, b) => b.count - a.count || a.index - b.index)
    .slice(0, limit)
    .map(({ stem }) => surface.get(stem) ?? stem);
}

/** A keyword's form in the user's token: the token itself when it is one word, else the stem. */
function surfaceForm(token: string, stem: string): string {
  const lower = token.toLowerCase();
  return /^[a-z]+$/.test(lower) && lower.startsWith(stem.slice(0, 3)) ? lower : stem;
}

/** The segment's title: its representative intent, cut short. */
export function segmentTitle(annotation: EpisodeAnnotation): string | null {
  return annotation.intent === null ? null : truncateChars(oneLine(annotation.intent), TITLE_CHARS);
}

/**
 * 1–3 sentences (seed 001's operational context), all from the events:
 * "Worked on auth, token, refresh: "fix the token refresh race …". Touched src/auth/refresh.ts,
 * … (12 tool calls: 7 reads or searches, 5 edits or commands). Outcome: success after 14 min;
 * 2 failed calls along the way."
 */
export function narrativeOf(
  annotation: EpisodeAnnotation,
  userPrompts: readonly PromptEntry[],
): string | null {
  const sentences: string[] = [];
  const topics = topicWords(userPrompts);
  const intent =
    annotation.intent === null ? null : truncateChars(oneLine(annotation.intent), INTENT_CHARS);
  if (topics.length > 0 || intent !== null) {
    const about = topics.length > 0 ? `Worked on ${topics.join(', ')}` : 'Worked on';
    const quoted = intent !== null && wordCount(intent) > 1 ? `: "${intent}"` : '';
    sentences.push(`${about}${quoted}.`);
  }
  if (annotation.obsCount > 0) {
    const files = annotation.hotFiles.map((file) => file.path);
    const calls = `${plural(annotation.obsCount, 'tool call')}: ${annotation.investigate} reads or searches, ${annotation.execute} edits or commands`;
    sentences.push(
      files.length > 0 ? `Touched ${listFiles(files, 3)} (${calls}).` : `Made ${calls}.`,
    );
  }
  const failures =
    annotation.failures > 0 ? `; ${plural(annotation.failures, 'failed call')} along the way` : '';
  if (annotation.durationMs > 0 || annotation.outcome !== 'unknown') {
    sentences.push(
      `Outcome: ${annotation.outcome} after ${formatDuration(annotation.durationMs)}${failures}.`,
    );
  }
  return sentences.length === 0 ? null : sentences.join(' ');
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
