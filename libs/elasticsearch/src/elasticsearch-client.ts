import { Client, errors, HttpConnection } from '@elastic/elasticsearch';
import { DownstreamUnavailableError, EngramError, errorMessage } from '@engram/core';

/**
 * The 8.x client on purpose: it talks to the Elasticsearch 8 server we run (a 9.x client sends
 * `compatible-with=9`, which an 8.x server rejects).
 *
 * Over Node's http agent (keep-alive), not the default undici connection: undici writes a request
 * on an idle keep-alive socket only after a full turn of the event loop (its check that the server
 * did not close the socket meanwhile), so a search a recall sends just before embedding its query
 * left only once the embedding — synchronous, 4–5 ms — was done, and every request paid the extra
 * turn. Measured on 100k memories: a BM25 `_msearch` p50 4.6 → 3.4 ms; recall over gRPC p50
 * 15.0 → 13.2 ms. A socket the server closed meanwhile fails the request as a connection error,
 * which the client retries (`maxRetries`).
 */
export function createElasticsearchClient(url: string): Client {
  return new Client({
    node: url,
    Connection: HttpConnection,
    requestTimeout: 30_000,
    maxRetries: 2,
  });
}

export interface ElasticsearchHealth {
  ok: boolean;
  status: string;
  detail?: string;
}

/** Health from `_cluster/health` (the embedded node has no `GET /`; see deploy/local). */
export async function elasticsearchHealth(client: Client): Promise<ElasticsearchHealth> {
  try {
    const health = await client.cluster.health();
    return { ok: health.status !== 'red', status: health.status };
  } catch (error) {
    return { ok: false, status: 'unreachable', detail: errorMessage(error) };
  }
}

const UNAVAILABLE_STATUS = new Set([408, 429, 502, 503, 504]);

/** Outages and overload are retriable; anything else is the request's own fault. */
export function classifyElasticsearchError(error: unknown): unknown {
  if (error instanceof EngramError) return error;
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError
  ) {
    return new DownstreamUnavailableError(
      `elasticsearch: ${errorMessage(error)}`,
      {},
      { cause: error },
    );
  }
  if (error instanceof errors.ResponseError && UNAVAILABLE_STATUS.has(error.statusCode ?? 0)) {
    return new DownstreamUnavailableError(
      `elasticsearch: ${errorMessage(error)}`,
      {},
      { cause: error },
    );
  }
  return error;
}
