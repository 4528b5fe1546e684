import { isoDay, REFLECTION_SECTIONS } from '@engram/core';
import type { recallv1, reviewv1 } from '@engram/grpc';

// The answers of the gRPC services as the text an MCP tool returns to the agent: short, one item a
// line, every item with the id another tool takes (memory ids for feedback, episode ids for
// episode_chain, proposal ids for review_approve / review_reject). Pure functions.

function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function idOf(result: recallv1.RecallResult__Output): string {
  return (
    result.memory?.memoryId ||
    result.episode?.episodeId ||
    result.turn?.eventId ||
    result.provenance?.memoryId ||
    ''
  );
}

function kindOf(result: recallv1.RecallResult__Output): string {
  if (result.memory) return `memory/${result.memory.type}`;
  if (result.episode) return 'episode';
  return 'turn';
}

function sourceOf(p: recallv1.Provenance__Output | null): string {
  if (p === null) return '';
  return [
    p.sessionIds.length ? `sessions ${p.sessionIds.join(', ')}` : '',
    p.episodeIds.length ? `episodes ${p.episodeIds.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/**
 * A recall: rank, kind, score, id and text, the outdated memories it replaces, then where it came
 * from.
 */
export function formatRecall(
  query: string,
  projectId: string,
  response: recallv1.RecallResponse__Output,
): string {
  if (response.results.length === 0) return `nothing recalled for "${query}" in ${projectId}`;
  const lines = [`recall "${query}" in ${projectId}: ${plural(response.results.length, 'result')}`];
  response.results.forEach((result, index) => {
    const score = (result.scores?.finalScore ?? 0).toFixed(4);
    lines.push(
      `${index + 1}. [${kindOf(result)}] ${idOf(result)} (${score}) ${oneLine(result.text)}`,
    );
    // Outdated memories this result replaced: its history, with their ids for feedback.
    for (const old of result.replaces ?? []) {
      lines.push(`   replaces: ${old.memoryId} ${oneLine(old.content)}`);
    }
    const source = sourceOf(result.provenance);
    if (source !== '') lines.push(`   from ${source}`);
  });
  return lines.join('\n');
}

/** BuildContext / InjectForFile: the server's rendered block, or why there is none. */
export function formatRendered(rendered: string, nothing: string): string {
  return rendered.trim() === '' ? nothing : rendered;
}

export function formatRemembered(response: recallv1.RememberResponse__Output): string {
  if (!response.accepted) return `not remembered (event ${response.eventId})`;
  return response.memoryId === ''
    ? `noted (event ${response.eventId}): it becomes a memory once Engram validates it`
    : `remembered as memory ${response.memoryId} (event ${response.eventId})`;
}

export function formatFeedback(response: recallv1.FeedbackResponse__Output): string {
  if (response.deleted) return `memory ${response.memoryId} deleted`;
  if (!response.applied) return `feedback on memory ${response.memoryId} changed nothing`;
  return `feedback applied to memory ${response.memoryId}: confidence now ${response.confidence.toFixed(2)}`;
}

export function formatNeighbors(response: recallv1.GetFileNeighborsResponse__Output): string {
  if (response.neighbors.length === 0) return `no neighbours known for ${response.filePath}`;
  return [
    `files a session touching ${response.filePath} touches next:`,
    ...response.neighbors.map(
      (n, i) => `${i + 1}. ${n.path} (score ${n.score.toFixed(3)}, ${n.source}, ${n.direction})`,
    ),
  ].join('\n');
}

function episodeLine(episode: recallv1.EpisodeItem__Output): string {
  const when = episode.startedAtMs > 0 ? new Date(episode.startedAtMs).toISOString() : 'unknown';
  const what = oneLine(episode.summary || episode.intent || episode.intentKeywords.join(' '));
  return `${episode.episodeId} (${when}, ${episode.outcome || 'unknown'}) ${what}`;
}

export function formatEpisodeChain(
  episodeId: string,
  response: recallv1.GetEpisodeChainResponse__Output,
): string {
  const episodes = response.episodes.flatMap((e) => (e.episode ? [e.episode] : []));
  if (episodes.length === 0) return `no episode ${episodeId}`;
  return [
    `the chain of episode ${episodeId}, root first:`,
    ...episodes.map((e, i) => `${i + 1}. ${episodeLine(e)}`),
    ...(response.cycleDetected ? ['(a cycle in the parents was cut here)'] : []),
  ].join('\n');
}

/** One episode as a Markdown page (the episode resource). */
export function formatEpisode(episode: recallv1.EpisodeItem__Output, chain: string[]): string {
  const time = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : 'unknown');
  const list = (label: string, items: string[]) =>
    items.length === 0 ? [] : [`- ${label}: ${items.join(', ')}`];
  return [
    `# Episode ${episode.episodeId}`,
    '',
    `- session: ${episode.sessionId}, thread: ${episode.threadId}`,
    `- from ${time(episode.startedAtMs)} to ${time(episode.endedAtMs)} (prompts ${episode.firstPromptId}–${episode.lastPromptId})`,
    `- outcome: ${episode.outcome || 'unknown'}${episode.failures ? `, ${plural(episode.failures, 'failure')}` : ''}`,
    ...list('intent', episode.intent ? [episode.intent] : []),
    ...list('keywords', episode.intentKeywords),
    ...list(
      'files',
      episode.hotFiles.map((f) => `${f.path} (${f.touches})`),
    ),
    ...list('tools', episode.toolsUsed),
    ...list('decisions', episode.keyDecisions),
    ...list('earlier episodes of its chain', chain),
    '',
    episode.summary || '_No summary yet._',
    '',
  ].join('\n');
}

export function formatDecision(decision: {
  proposal: reviewv1.Proposal__Output;
  changed: boolean;
}): string {
  const p = decision.proposal;
  const head = `${p.proposalId} ${p.status}${decision.changed ? '' : ' (already)'}: ${p.text}`;
  return p.promotedMemoryId === '' ? head : `${head}\n→ user-verified memory ${p.promotedMemoryId}`;
}

/**
 * The project's MEMORY.md from the review API: its approved proposals in `engram memory-md`'s
 * layout (the four sections in order, `- (YYYY-MM-DD) text`, oldest first). Memories a person
 * taught directly (Remember as a user) are not proposals and are not in it.
 */
export function memoryMdOfProposals(
  projectId: string,
  proposals: readonly reviewv1.Proposal__Output[],
): string {
  const approved = proposals
    // Friction proposals are file changes and memories to retire, not MEMORY.md lines.
    .filter((p) => p.status === 'approved' && p.projectId === projectId && p.kind !== 'friction')
    .sort((a, b) => a.decidedAt - b.decidedAt || a.proposalId.localeCompare(b.proposalId));
  const newest = approved.reduce((max, p) => Math.max(max, p.decidedAt), 0);
  const lines = [
    `# MEMORY — ${projectId}`,
    '',
    approved.length === 0
      ? '_Curated by Engram: no memories yet._'
      : `_Curated by Engram: ${plural(approved.length, 'memory', 'memories')}, last updated ${isoDay(newest)}._`,
  ];
  for (const section of REFLECTION_SECTIONS) {
    const items = approved.filter((p) => p.section === section);
    lines.push('', `## ${section}`, '');
    if (items.length === 0) lines.push('_Nothing yet._');
    for (const p of items) lines.push(`- (${isoDay(p.decidedAt)}) ${oneLine(p.text, 2000)}`);
  }
  return `${lines.join('\n')}\n`;
}
