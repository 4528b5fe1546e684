// Impact radius of a file: what else a change to $path is likely to touch, spread hop by hop over
// co-access edges (what AnalyzeImpact walks, SPEC §7; libs/core propagateImpact). Each file at the
// fewest hops it is reached in, with the heaviest product of edge weights over paths of that
// length, and that path (`via`, from $path); a path whose product falls below $minWeight is not
// followed (AnalyzeImpact: 0.1). AnalyzeImpact reads each file's 10 strongest neighbours per hop;
// this query follows every edge, so on a dense graph it can reach a few more files.
// Parameters: $tenantId, $projectId, $path, $maxDepth (1..5; AnalyzeImpact's default is 3),
// $minWeight.
MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})
MATCH p = (f)-[:CO_ACCESSED*1..5]-(n:File)
WHERE length(p) <= $maxDepth AND n <> f
  AND all(r IN relationships(p) WHERE r.weight >= $minWeight)
WITH n, length(p) AS depth, reduce(w = 1.0, r IN relationships(p) | w * r.weight) AS weight,
     [x IN nodes(p) | x.path] AS via
WHERE weight >= $minWeight
WITH n, depth, weight, via ORDER BY depth ASC, weight DESC, via ASC
WITH n, collect({depth: depth, weight: weight, via: via})[0] AS best
RETURN n.path AS file, n.module AS module, best.depth AS depth, best.weight AS weight,
       best.via AS via
ORDER BY weight DESC, file ASC
