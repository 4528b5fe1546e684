import { contextInWorkingTree, injectionInWorkingTree, recallInWorkingTree } from '@engram/core';
import type { recallv1 } from '@engram/grpc';
import { contextItemOf, injectedMemoryOf } from '../hook-context-grpc';
import { workingTreeCheck } from '../working-tree';
import type { McpScope } from './mcp-requests';

// What the MCP tools return, checked against the agent's working tree first (seed 002 §7,
// layer 1; libs/core working-tree-check.ts): the recall service cannot stat the agent's files.
// Without a known project root the answers pass unchanged.

/** build_context's text without the items about files that are all gone. */
export function contextChecked(
  response: recallv1.BuildContextResponse__Output,
  scope: Pick<McpScope, 'projectRoot'>,
): string {
  const check = workingTreeCheck(scope.projectRoot);
  if (check === null) return response.rendered;
  const items = response.items.map(contextItemOf);
  return contextInWorkingTree({ items, rendered: response.rendered }, check).answer.rendered;
}

/** inject_for_file's text without the memories about files that are all gone. */
export function injectionChecked(
  response: recallv1.InjectForFileResponse__Output,
  scope: Pick<McpScope, 'projectRoot'>,
): string {
  const check = workingTreeCheck(scope.projectRoot);
  if (check === null) return response.rendered;
  const memories = response.memories.flatMap(injectedMemoryOf);
  return injectionInWorkingTree({ memories, rendered: response.rendered }, check).answer.rendered;
}

/** recall's results, a memory about files that are all gone marked stale (the agent asked). */
export function recallChecked(
  response: recallv1.RecallResponse__Output,
  scope: Pick<McpScope, 'projectRoot'>,
): recallv1.RecallResponse__Output {
  const check = workingTreeCheck(scope.projectRoot);
  if (check === null) return response;
  return { ...response, results: recallInWorkingTree(response.results, check).answer };
}
