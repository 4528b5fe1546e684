import {
  errorMessage,
  InvalidRecallRequestError,
  parseRecallRequest,
  type RecallRequestInput,
} from '@engram/core';
import type { RecallAnswer, RecallService } from '@engram/app-retrieval';
import { recallJsonLine, type RecallJsonLine } from './recall-output';

// Answering recalls as `engram recall` states them: one from the command line, or a file of
// `--queries` lines, each checked field by field so a bad line names what to fix.

/** One recall as the command line or a `--queries` line states it (SPEC §12). */
export interface RecallCliQuery {
  id?: unknown;
  query?: unknown;
  phase?: unknown;
  k?: unknown;
  project?: unknown;
  tenant?: unknown;
  tier?: unknown;
}

/** Defaults from the command line, for what a `--queries` line leaves out. */
export interface RecallDefaults {
  project?: string;
  tenant?: string;
  phase?: string;
  k?: number;
  tier?: string;
  /** False: the returned memories are not counted as accessed (`--no-track`). */
  track?: boolean;
}

export interface RecallDeps {
  service: RecallService;
  /** The tenants that have data for a project (for a recall without --tenant). */
  tenantsOf(project: string): Promise<string[]>;
}

/** A recall that cannot be answered as written; the message starts with the field to fix. */
export class RecallLineError extends Error {}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RecallLineError(`${field}: must be a string`);
  return value;
}

function optionalK(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RecallLineError(
      `k: must be a whole number of at least 1, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The tenant to read: the given one, else the only tenant with data for the project. */
async function tenantFor(deps: RecallDeps, project: string, tenant: string | undefined) {
  if (tenant !== undefined) return tenant;
  const tenants = await deps.tenantsOf(project);
  if (tenants.length > 1) {
    throw new RecallLineError(
      `project ${project} exists for several tenants (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants[0] ?? null;
}

/**
 * Answers one recall. A project nobody has written to answers with no results (it is not an
 * error to ask); a request the core refuses throws RecallLineError naming the field.
 */
export async function answerRecall(
  deps: RecallDeps,
  input: RecallCliQuery,
  defaults: RecallDefaults,
): Promise<RecallJsonLine> {
  const query = optionalString(input.query, 'query') ?? '';
  const project = optionalString(input.project, 'project') ?? defaults.project;
  if (project === undefined || project.trim() === '') {
    throw new RecallLineError('project: is required (pass --project or give it on the line)');
  }
  const phase = optionalString(input.phase, 'phase') ?? defaults.phase;
  const k = optionalK(input.k) ?? defaults.k;
  const tier = optionalString(input.tier, 'tier') ?? defaults.tier;
  const tenant = await tenantFor(
    deps,
    project,
    optionalString(input.tenant, 'tenant') ?? defaults.tenant,
  );
  const request = {
    tenantId: tenant ?? '',
    projectId: project,
    query,
    phase,
    k,
    tier,
    track: defaults.track ?? true,
  };
  try {
    const answer =
      tenant === null ? emptyAnswer(deps.service, request) : await deps.service.recall(request);
    return recallJsonLine(input.id ?? null, answer, tenant);
  } catch (error) {
    if (error instanceof InvalidRecallRequestError) {
      throw new RecallLineError(error.message, { cause: error });
    }
    throw error;
  }
}

/** No tenant has data for the project: nothing to search, but the request is still checked. */
function emptyAnswer(service: RecallService, request: RecallRequestInput): RecallAnswer {
  return {
    query: parseRecallRequest({ ...request, tenantId: 'none' }),
    results: [],
    embeddingModel: service.embeddingModel,
    hyde: null,
    timings: { embedMs: 0, hydeMs: 0, searchMs: 0, rankMs: 0, totalMs: 0 },
  };
}

export interface BatchSummary {
  answered: number;
  failed: number;
}

/**
 * `--queries FILE.jsonl`: one JSON line out per query line, in input order. A bad line (not
 * JSON, not an object, a field the core refuses) is reported on `errors` with its line number and
 * answered with `{id, line, error, results: []}` so output lines stay aligned with input lines;
 * the other lines are answered. Blank lines are not queries. An outage stops the batch.
 */
export async function runRecallBatch(
  deps: RecallDeps,
  content: string,
  defaults: RecallDefaults,
  out: NodeJS.WritableStream,
  errors: NodeJS.WritableStream,
): Promise<BatchSummary> {
  const summary: BatchSummary = { answered: 0, failed: 0 };
  const lines = content.split(/\r?\n/);
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const line = index + 1;
    let parsed: RecallCliQuery | undefined;
    try {
      parsed = parseQueryLine(text);
      out.write(`${JSON.stringify(await answerRecall(deps, parsed, defaults))}\n`);
      summary.answered += 1;
    } catch (error) {
      if (!(error instanceof RecallLineError)) throw error;
      const message = `line ${line}: ${error.message}`;
      errors.write(`${message}\n`);
      out.write(
        `${JSON.stringify({ id: parsed?.id ?? null, line, error: message, results: [] })}\n`,
      );
      summary.failed += 1;
    }
  }
  return summary;
}

function parseQueryLine(text: string): RecallCliQuery {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecallLineError(`not JSON (${errorMessage(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RecallLineError('must be a JSON object {id, query, phase?, k?, project?}');
  }
  return value;
}
