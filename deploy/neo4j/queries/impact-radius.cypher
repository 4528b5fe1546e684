// Impact radius of a file: what else a change to $path is likely to touch, spread hop by hop over
// co-access edges (what AnalyzeImpact walks, SPEC §7; libs/core propagateImpact). Each file at the
// fewest hops it is reached in, with the heaviest product of edge weights over paths of that
// length, and that path (`via`, from $path); a file whose product falls below $minWeight is
// neither listed nor followed (AnalyzeImpact: 0.1). AnalyzeImpact reads each file's 10 strongest
// neighbours per hop; this query follows every edge, so on a dense graph it can list a few more.
// Breadth first, one CALL per hop (hops 2 to 5 repeat hop 1 one step further; those beyond
// $maxDepth do nothing): each hop expands only the files first reached by the one before, where a
// single variable-length MATCH would enumerate every path (measured: a 300-file graph with 4,490
// edges ran out of transaction memory at 5 hops).
// Parameters: $tenantId, $projectId, $path, $maxDepth (1..5; AnalyzeImpact's default is 3),
// $minWeight.
MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})
WITH [{file: f.path, module: f.module, depth: 0, weight: 1.0, via: [f.path]}] AS reached
CALL (reached) {
  WITH reached WHERE $maxDepth >= 1
  UNWIND [x IN reached WHERE x.depth = 0] AS from
  MATCH (:File {tenantId: $tenantId, projectId: $projectId, path: from.file})-[r:CO_ACCESSED]-(n:File)
  WHERE NOT n.path IN [x IN reached | x.file]
  WITH n, from.weight * r.weight AS weight, from.via + n.path AS via
  WHERE weight >= $minWeight
  WITH n, weight, via ORDER BY weight DESC, via ASC
  WITH n, collect({weight: weight, via: via})[0] AS best
  RETURN collect({file: n.path, module: n.module, depth: 1, weight: best.weight, via: best.via}) AS next
}
WITH reached + next AS reached
CALL (reached) {
  WITH reached WHERE $maxDepth >= 2
  UNWIND [x IN reached WHERE x.depth = 1] AS from
  MATCH (:File {tenantId: $tenantId, projectId: $projectId, path: from.file})-[r:CO_ACCESSED]-(n:File)
  WHERE NOT n.path IN [x IN reached | x.file]
  WITH n, from.weight * r.weight AS weight, from.via + n.path AS via
  WHERE weight >= $minWeight
  WITH n, weight, via ORDER BY weight DESC, via ASC
  WITH n, collect({weight: weight, via: via})[0] AS best
  RETURN collect({file: n.path, module: n.module, depth: 2, weight: best.weight, via: best.via}) AS next
}
WITH reached + next AS reached
CALL (reached) {
  WITH reached WHERE $maxDepth >= 3
  UNWIND [x IN reached WHERE x.depth = 2] AS from
  MATCH (:File {tenantId: $tenantId, projectId: $projectId, path: from.file})-[r:CO_ACCESSED]-(n:File)
  WHERE NOT n.path IN [x IN reached | x.file]
  WITH n, from.weight * r.weight AS weight, from.via + n.path AS via
  WHERE weight >= $minWeight
  WITH n, weight, via ORDER BY weight DESC, via ASC
  WITH n, collect({weight: weight, via: via})[0] AS best
  RETURN collect({file: n.path, module: n.module, depth: 3, weight: best.weight, via: best.via}) AS next
}
WITH reached + next AS reached
CALL (reached) {
  WITH reached WHERE $maxDepth >= 4
  UNWIND [x IN reached WHERE x.depth = 3] AS from
  MATCH (:File {tenantId: $tenantId, projectId: $projectId, path: from.file})-[r:CO_ACCESSED]-(n:File)
  WHERE NOT n.path IN [x IN reached | x.file]
  WITH n, from.weight * r.weight AS weight, from.via + n.path AS via
  WHERE weight >= $minWeight
  WITH n, weight, via ORDER BY weight DESC, via ASC
  WITH n, collect({weight: weight, via: via})[0] AS best
  RETURN collect({file: n.path, module: n.module, depth: 4, weight: best.weight, via: best.via}) AS next
}
WITH reached + next AS reached
CALL (reached) {
  WITH reached WHERE $maxDepth >= 5
  UNWIND [x IN reached WHERE x.depth = 4] AS from
  MATCH (:File {tenantId: $tenantId, projectId: $projectId, path: from.file})-[r:CO_ACCESSED]-(n:File)
  WHERE NOT n.path IN [x IN reached | x.file]
  WITH n, from.weight * r.weight AS weight, from.via + n.path AS via
  WHERE weight >= $minWeight
  WITH n, weight, via ORDER BY weight DESC, via ASC
  WITH n, collect({weight: weight, via: via})[0] AS best
  RETURN collect({file: n.path, module: n.module, depth: 5, weight: best.weight, via: best.via}) AS next
}
WITH reached + next AS reached
UNWIND [x IN reached WHERE x.depth > 0] AS hit
RETURN hit.file AS file, hit.module AS module, hit.depth AS depth, hit.weight AS weight,
       hit.via AS via
ORDER BY weight DESC, file ASC
