// Files of a session, or of one episode of it: the graph keeps touches per session (an episode
// is a span of its session's time), so an episode's files are the session's files touched
// between the episode's start and end. $from / $to null: the whole session.
// Bootstrap commits are sessions too: $sessionId 'commit:<sha>@<tenant>/<project>'.
// Parameters: $sessionId, $from, $to (epoch millis, or null).
MATCH (s:Session {id: $sessionId})-[t:TOUCHED]->(f:File)
WHERE ($from IS NULL OR t.lastAt >= $from) AND ($to IS NULL OR t.firstAt <= $to)
RETURN f.path AS file, f.module AS module, t.reads AS reads, t.edits AS edits,
       t.accesses AS accesses, t.firstAt AS firstAt, t.lastAt AS lastAt
ORDER BY firstAt ASC, file ASC
