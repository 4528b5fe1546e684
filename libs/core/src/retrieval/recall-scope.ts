import { InvalidRecallRequestError } from './retrieval-errors';

/** Every read is scoped by tenant and project (SPEC §11): no query can reach other tenants. */
export interface RecallScope {
  tenantId: string;
  projectId: string;
}

/**
 * The scope, trimmed; throws InvalidRecallRequestError naming `tenantId` or `projectId` when one
 * is missing or blank. Called by every entry point: an unscoped query is a bug, never "all".
 */
export function requireScope(scope: Partial<RecallScope> | null | undefined): RecallScope {
  const tenantId = scope?.tenantId?.trim() ?? '';
  const projectId = scope?.projectId?.trim() ?? '';
  if (tenantId === '') throw new InvalidRecallRequestError('tenantId', 'is required');
  if (projectId === '') throw new InvalidRecallRequestError('projectId', 'is required');
  return { tenantId, projectId };
}

/** True when the record belongs to the scope (defence in depth behind the store's own filter). */
export function inScope(
  record: { tenantId: string; projectId: string },
  scope: RecallScope,
): boolean {
  return record.tenantId === scope.tenantId && record.projectId === scope.projectId;
}
