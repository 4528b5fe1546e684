import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { toolErrorMessage, type CalledService } from './mcp-errors';
import { formatEpisode, memoryMdOfProposals } from './mcp-format';
import type { McpToolDeps } from './mcp-tools';

/** The project's MEMORY.md (the configured project). */
export const MEMORY_MD_URI = 'engram://memory/MEMORY.md';
/** One episode of the project by id. */
export const EPISODE_URI_TEMPLATE = 'engram://episodes/{episode_id}';

/** A read that failed: a JSON-RPC error with the same message a tool would give. */
async function reading<T>(service: CalledService, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InternalError, toolErrorMessage(error, service));
  }
}

export function registerEngramResources(server: McpServer, deps: McpToolDeps): void {
  const { grpc, scope } = deps;
  server.registerResource(
    'MEMORY.md',
    MEMORY_MD_URI,
    {
      title: `MEMORY.md of ${scope.projectId}`,
      description:
        "The project's curated memory: the MEMORY.md proposals a person approved, by section.",
      mimeType: 'text/markdown',
    },
    (uri) =>
      reading(deps.services.review, async () => {
        const { proposals } = await grpc.review.list({
          scope: { tenantId: scope.tenantId, projectId: scope.projectId },
          status: 'approved',
        });
        const text = memoryMdOfProposals(scope.projectId, proposals);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
      }),
  );
  server.registerResource(
    'episode',
    new ResourceTemplate(EPISODE_URI_TEMPLATE, { list: undefined }),
    {
      title: 'An episode of the project',
      description: 'One episode (a unit of work of a session) by id: what, when, files, outcome.',
      mimeType: 'text/markdown',
    },
    (uri, variables) =>
      reading(deps.services.recall, async () => {
        const raw = variables.episode_id;
        const episodeId = decodeURIComponent(Array.isArray(raw) ? (raw[0] ?? '') : raw);
        const { episodes } = await grpc.recall.getEpisodeChain({
          scope: { tenantId: scope.tenantId, projectId: scope.projectId },
          episodeId,
        });
        const chain = episodes.flatMap((e) => (e.episode ? [e.episode] : []));
        const episode = chain.at(-1);
        if (episode === undefined || episode.episodeId !== episodeId) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `no episode ${episodeId} in project ${scope.projectId}`,
          );
        }
        const earlier = chain.slice(0, -1).map((e) => e.episodeId);
        return {
          contents: [
            { uri: uri.href, mimeType: 'text/markdown', text: formatEpisode(episode, earlier) },
          ],
        };
      }),
  );
}
