// Recurring error patterns of a project and how they were resolved: the normalised error (paths,
// numbers, ids stripped), in how many sessions it came back, the share of its retry runs that
// ended in a fix, and the fixes seen (each session's last one, newest first).
// SPEC §5: the same error 3+ times → error_pattern.
// Parameters: $tenantId, $projectId, $minSessions.
MATCH (e:ErrorPattern {tenantId: $tenantId, projectId: $projectId})
WHERE e.sessionCount >= $minSessions
MATCH (:Session)-[h:HIT]->(e)
WITH e, h ORDER BY h.lastSeenAt DESC
WITH e, sum(h.episodes) AS episodes, sum(h.resolvedEpisodes) AS resolvedEpisodes,
     collect(DISTINCT CASE WHEN h.resolvedEpisodes > 0 THEN h.lastResolution END) AS resolutions
RETURN e.hash AS hash, e.toolName AS toolName, e.normalisedError AS error,
       e.sessionCount AS sessions, e.occurrences AS occurrences,
       CASE WHEN episodes = 0 THEN 0.0 ELSE toFloat(resolvedEpisodes) / episodes END AS resolvedShare,
       resolutions, e.lastSeenAt AS lastSeenAt
ORDER BY sessions DESC, occurrences DESC, hash ASC
