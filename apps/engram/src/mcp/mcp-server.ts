import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { openEngramGrpc, type EngramGrpcEndpoints } from './mcp-grpc';
import type { McpScope } from './mcp-requests';
import { registerEngramResources } from './mcp-resources';
import { registerEngramTools, type McpToolDeps } from './mcp-tools';

export const MCP_SERVER_NAME = 'engram';
const MCP_SERVER_VERSION = '0.1.0';

const INSTRUCTIONS =
  "Engram is this project's memory of past agent sessions. Call build_context at the start of a " +
  'task, inject_for_file before editing a file, recall to search, remember to note a lesson for ' +
  'later sessions, and feedback when a recalled memory is wrong or outdated.';

/** The MCP server on the given gRPC clients (tests pass their own; `engram mcp` opens them). */
export function createEngramMcpServer(
  deps: McpToolDeps,
  endpoints: Pick<EngramGrpcEndpoints, 'recallUrl' | 'reviewUrl'>,
): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    {
      instructions: `${INSTRUCTIONS} Scope: tenant ${deps.scope.tenantId}, project ${deps.scope.projectId}; services at ${endpoints.recallUrl} (recall) and ${endpoints.reviewUrl} (review).`,
    },
  );
  registerEngramTools(server, deps);
  registerEngramResources(server, deps);
  return server;
}

/** The two services as the error messages name them. */
export function calledServices(
  endpoints: Pick<EngramGrpcEndpoints, 'recallUrl' | 'reviewUrl'>,
  tenantId: string,
): McpToolDeps['services'] {
  return {
    recall: {
      name: 'recall API',
      url: endpoints.recallUrl,
      urlVariable: 'ENGRAM_RECALL_GRPC_URL',
      tenantId,
    },
    review: {
      name: 'review API',
      url: endpoints.reviewUrl,
      urlVariable: 'ENGRAM_REVIEW_GRPC_URL',
      tenantId,
    },
  };
}

/**
 * `engram mcp`: the server on stdio until the client closes stdin. stdout carries the protocol
 * only; what the process has to say goes to stderr.
 */
export async function runEngramMcpStdio(
  scope: McpScope,
  endpoints: EngramGrpcEndpoints,
): Promise<void> {
  const grpc = openEngramGrpc(endpoints);
  const server = createEngramMcpServer(
    { grpc, scope, services: calledServices(endpoints, scope.tenantId) },
    endpoints,
  );
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    server.server.onclose = resolve;
  });
  await server.connect(transport);
  console.error(
    `engram mcp: tenant ${scope.tenantId}, project ${scope.projectId}; recall API ${endpoints.recallUrl}, ` +
      `review API ${endpoints.reviewUrl}${endpoints.token ? ', with a token' : ', no token'}`,
  );
  await closed;
  await server.close();
  grpc.close();
}
