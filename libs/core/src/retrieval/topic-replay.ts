import type { Episode } from '@engram/contracts';

const SUMMARY_CHARS = 200;

/**
 * Seed 003's replay_topic text: a dated line per episode (oldest first, as given), the chain link
 * when it continues an earlier episode, the summary (first 200 characters) and tags / outcome.
 * Dates are UTC, so the text is the same on every machine.
 */
export function renderTopicReplay(topic: string, episodes: readonly Episode[]): string {
  if (episodes.length === 0) return `No episodes found for topic: ${topic}`;
  const lines = [`📜 Episode history for '${topic}' (${episodes.length} episodes):`, ''];
  for (const episode of episodes) {
    const date = new Date(episode.startedAt).toISOString().slice(0, 10);
    const parent = episode.parentEpisodeId
      ? ` (continues from ${episode.parentEpisodeId.slice(0, 8)})`
      : '';
    lines.push(`• [${date}] ${episodeTitle(episode)}${parent}`);
    if (episode.summary) lines.push(`  ${episode.summary.slice(0, SUMMARY_CHARS)}`);
    if (episode.tags.length > 0) {
      lines.push(`  Tags: ${episode.tags.join(', ')} | Outcome: ${episode.outcome}`);
    }
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}

/** What an episode was about: its representative prompt, else its keywords, else "Untitled". */
export function episodeTitle(episode: Episode): string {
  const intent = episode.intent?.trim();
  if (intent) return intent;
  if (episode.intentKeywords.length > 0) return episode.intentKeywords.slice(0, 6).join(', ');
  return 'Untitled';
}
