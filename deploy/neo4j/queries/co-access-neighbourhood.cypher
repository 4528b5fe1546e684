// Co-access neighbourhood of a file: the files sessions touch with it, strongest first (what
// `engram neighbors` prints). weight = sessions with both / sessions with either.
// direction is seen from $path: outgoing = $path usually comes first, incoming = the neighbour
// does, both = no reliable order (co-commits from `engram bootstrap` never have one).
// Parameters: $tenantId, $projectId, $path (relative to the project root), $k.
MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})-[e:CO_ACCESSED]-(n:File)
WITH n, e,
     CASE e.direction
       WHEN 'none' THEN 'both'
       WHEN (CASE WHEN startNode(e) = f THEN 'a_to_b' ELSE 'b_to_a' END) THEN 'outgoing'
       ELSE 'incoming'
     END AS direction
RETURN n.path AS file, n.module AS module, e.weight AS weight, e.rawCount AS rawCount,
       e.sessionCount AS sessions, e.avgTimeDeltaMs AS avgTimeDeltaMs, direction,
       e.lastObservedAt AS lastObservedAt
ORDER BY weight DESC, rawCount DESC, file ASC
LIMIT toInteger($k)
