import type { MappingTypeMapping } from '@elastic/elasticsearch/lib/api/types';
import type { EventEnvelope, ToolCallObserved } from '@engram/contracts';
import { normaliseErrorMessage } from '@engram/core';
import type { BulkWriter } from './bulk-writer';
import type { IndexDefinition } from './index-setup';
import {
  ENVELOPE_PROPERTIES,
  freeKeyword,
  RETRIEVAL_MAPPING_VERSION,
  retrievalIndexNames,
  retrievalIndexSettings,
} from './retrieval-indices';

// The tool calls of distributed mode (issue #21): compact documents, one per
// agent.tool-calls.v1 event, for the friction report's aggregations (retry loops, the failure
// timeline, tool time and tokens). Embedded mode reads events.db instead. No text is searched
// and no vector is stored: the indexer writes them without the embedder. The events are
// redacted at ingestion; long fields are cut here so every value stays an indexed keyword.

export const TOOL_CALL_INDEX_BASE_NAME = 'engram-tool-calls';

/**
 * Commands and error messages are cut to this many characters: a keyword longer than
 * FREE_KEYWORD_MAX_LENGTH would not be indexed, and so would drop out of the aggregations.
 */
export const TOOL_CALL_MAX_KEYWORD_CHARS = 1_000;
/** The part of an error message that is normalised (as the embedded source: 2,000 chars). */
const MAX_ERROR_CHARS = 2_000;
const MAX_FILE_PATHS = 50;

/** The tool-call index under a prefix (lowercased, as retrievalIndexNames). */
export function toolCallIndexName(prefix = ''): string {
  // The prefix is checked there; this base name is shorter than theirs, so it fits as well.
  retrievalIndexNames(prefix);
  return `${prefix.toLowerCase()}${TOOL_CALL_INDEX_BASE_NAME}`;
}

/** A tool call as the tool-call index keeps it (its envelope whole). */
export interface ToolCallDocument extends EventEnvelope {
  promptId: number;
  stepIndex: number;
  toolName: string;
  /** Absent when blank: a blank command is no command (as the embedded retry query). */
  command: string | null;
  failed: boolean;
  /** normaliseErrorMessage of the failed call's message (null: ok, or nothing left). */
  errorPattern: string | null;
  errorMessage: string | null;
  durationMs: number;
  tokensUsed: number | null;
  filePaths: string[];
  mcp: boolean;
}

const cut = (text: string) => text.slice(0, TOOL_CALL_MAX_KEYWORD_CHARS);

/** The document of a tool call (`_id`: its eventId, so a redelivery overwrites it). */
export function toolCallDocumentOf(call: ToolCallObserved): ToolCallDocument {
  const failed = call.outcome === 'error';
  const message = failed ? (call.errorMessage ?? '').slice(0, MAX_ERROR_CHARS) : '';
  const pattern = failed ? normaliseErrorMessage(message) : '';
  return {
    eventId: call.eventId,
    tenantId: call.tenantId,
    projectId: call.projectId,
    sessionId: call.sessionId,
    agentId: call.agentId,
    userId: call.userId ?? null,
    timestamp: call.timestamp,
    schemaVersion: call.schemaVersion,
    promptId: call.promptId,
    stepIndex: call.stepIndex,
    toolName: call.toolName,
    command: call.command !== null && call.command.trim() !== '' ? cut(call.command) : null,
    failed,
    errorPattern: pattern === '' ? null : cut(pattern),
    errorMessage: failed ? cut(message) : null,
    durationMs: call.durationMs,
    tokensUsed: call.tokensUsed ?? null,
    filePaths: call.filePaths.slice(0, MAX_FILE_PATHS),
    mcp: call.mcp,
  };
}

/** Strict, as the tiers: a field the builder does not write is a bug, refused. */
export function toolCallMapping(): MappingTypeMapping {
  return {
    dynamic: 'strict',
    _meta: { engram: { tier: 'tool-calls', mappingVersion: RETRIEVAL_MAPPING_VERSION } },
    properties: {
      ...ENVELOPE_PROPERTIES,
      promptId: { type: 'long' },
      stepIndex: { type: 'integer' },
      toolName: { type: 'keyword' },
      command: freeKeyword,
      failed: { type: 'boolean' },
      errorPattern: freeKeyword,
      errorMessage: freeKeyword,
      durationMs: { type: 'long' },
      tokensUsed: { type: 'long' },
      filePaths: freeKeyword,
      mcp: { type: 'boolean' },
    },
  };
}

export function toolCallIndexDefinition(options: { shards?: number } = {}): IndexDefinition {
  return { settings: retrievalIndexSettings(options), mappings: toolCallMapping() };
}

/** Where the indexer writes tool calls (the Elasticsearch side of the indexer's ToolCallIndex). */
export function elasticsearchToolCallWriter(writer: BulkWriter, index: string) {
  return {
    async write(
      calls: readonly ToolCallObserved[],
    ): Promise<{ indexed: number; requests: number }> {
      const report = await writer.write(
        calls.map((call) => ({
          action: 'index' as const,
          index,
          id: call.eventId,
          document: toolCallDocumentOf(call),
        })),
      );
      return { indexed: report.indexed, requests: report.requests };
    },
  };
}
