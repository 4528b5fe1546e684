// Hot files of a project: touched by the most sessions, with how they were used. Commits seeded
// by `engram bootstrap` are sessions of agent 'git': $includeCommits false counts only what
// agents did.
// Parameters: $tenantId, $projectId, $includeCommits (boolean), $k.
MATCH (s:Session)-[t:TOUCHED]->(f:File {tenantId: $tenantId, projectId: $projectId})
WHERE $includeCommits OR s.agentId <> 'git'
RETURN f.path AS file, f.module AS module, count(s) AS sessions, sum(t.accesses) AS accesses,
       sum(t.reads) AS reads, sum(t.edits) AS edits, max(t.lastAt) AS lastAt
ORDER BY sessions DESC, accesses DESC, file ASC
LIMIT toInteger($k)
