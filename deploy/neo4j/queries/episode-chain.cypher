// An episode chain in the graph: a piece of work that went on over several episodes, each
// continuing an earlier one on the same topic (seed 003; parentEpisodeId), often in other
// sessions and days apart. Per episode, root first: the files its session touched during it (as
// files-of-episode), those new to the chain and those an earlier episode of it touched too, and
// the error patterns its session hit (the graph keeps errors per session, not per episode).
// The graph has no (:Episode) nodes or CONTINUES edges yet (SPEC §5 names them; no service
// writes them), so the chain comes in as a parameter: the episodes GetEpisodeChain (gRPC)
// returns, root first (their sessionId, startedAtMs, endedAtMs; the parent links are
// engram-episodes' parentEpisodeId in Elasticsearch).
// Parameters: $chain, a list of {episodeId, sessionId, startedAt, endedAt} (epoch millis;
// endedAt null or 0 while the episode is open), root first.
UNWIND range(0, size($chain) - 1) AS step
WITH step, $chain[step] AS episode
OPTIONAL MATCH (s:Session {id: episode.sessionId})
CALL (s, episode) {
  OPTIONAL MATCH (s)-[t:TOUCHED]->(f:File)
  WHERE t.lastAt >= episode.startedAt
    AND (coalesce(episode.endedAt, 0) = 0 OR t.firstAt <= episode.endedAt)
  WITH f, t ORDER BY t.firstAt ASC, f.path ASC
  RETURN collect(f.path) AS files
}
CALL (s) {
  OPTIONAL MATCH (s)-[:HIT]->(e:ErrorPattern)
  WITH e ORDER BY e.hash ASC
  RETURN collect(e.normalisedError) AS sessionErrors
}
WITH step, episode, files, sessionErrors ORDER BY step ASC
WITH collect({step: step, episode: episode, files: files, errors: sessionErrors}) AS steps
UNWIND steps AS current
WITH current, reduce(seen = [], earlier IN steps[0..current.step] | seen + earlier.files) AS before
RETURN current.step + 1 AS step, current.episode.episodeId AS episodeId,
       current.episode.sessionId AS sessionId, current.files AS files,
       [path IN current.files WHERE NOT path IN before] AS newFiles,
       [path IN current.files WHERE path IN before] AS revisited,
       current.errors AS sessionErrors
ORDER BY step ASC
