import type { Client } from '@elastic/elasticsearch';
import type { IndicesCreateRequest } from '@elastic/elasticsearch/lib/api/types';

export type IndexDefinition = Omit<IndicesCreateRequest, 'index'>;

/**
 * Creates the index if it does not exist; safe to run at every start and from several instances at
 * once (a concurrent creation shows up as `resource_already_exists_exception`, which is success).
 * Existing indices are not modified: mapping changes go through `engram reindex`.
 */
export async function ensureIndex(
  client: Client,
  index: string,
  definition: IndexDefinition,
): Promise<'created' | 'exists'> {
  if (await client.indices.exists({ index })) return 'exists';
  try {
    await client.indices.create({ index, ...definition });
    return 'created';
  } catch (error) {
    if (isAlreadyExists(error)) return 'exists';
    throw error;
  }
}

function isAlreadyExists(error: unknown): boolean {
  const body = (error as { meta?: { body?: { error?: { type?: string } } } }).meta?.body;
  return body?.error?.type === 'resource_already_exists_exception';
}
