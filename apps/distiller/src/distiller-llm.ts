import { OpenAiCompatibleChatClient, type LlmClient } from '@engram/ai';
import {
  ExtractiveProjectReflector,
  LlmProjectReflector,
  type ProjectReflector,
} from './reflector/project-reflector';
import {
  ExtractiveWindowDistiller,
  LlmWindowDistiller,
  type LlmDistillerOptions,
  type WindowDistiller,
} from './window-distiller';

/** An OpenAI-compatible endpoint (ENGRAM_LLM_*), or a client already built (tests, other ports). */
export type DistillerLlm =
  | ({
      baseUrl: string;
      model: string;
      apiKey?: string;
      /** Per HTTP attempt (default 60 s). */
      timeoutMs?: number;
      /** HTTP attempts per call before the outage goes to the processor's backoff (default 2). */
      maxAttempts?: number;
    } & LlmDistillerOptions)
  | ({ client: LlmClient } & LlmDistillerOptions);

/** The LLM distiller when an endpoint (or client) is configured, else the extractive one. */
export function windowDistillerOf(llm: DistillerLlm | null | undefined): WindowDistiller {
  if (!llm) return new ExtractiveWindowDistiller();
  return new LlmWindowDistiller(llmClientOf(llm), llm);
}

/** The LLM reflector when an endpoint (or client) is configured, else the extractive one. */
export function projectReflectorOf(llm: DistillerLlm | null | undefined): ProjectReflector {
  if (!llm) return new ExtractiveProjectReflector();
  return new LlmProjectReflector(llmClientOf(llm));
}

function llmClientOf(llm: DistillerLlm): LlmClient {
  return 'client' in llm
    ? llm.client
    : new OpenAiCompatibleChatClient({
        baseUrl: llm.baseUrl,
        model: llm.model,
        ...(llm.apiKey !== undefined && { apiKey: llm.apiKey }),
        // Few, bounded attempts in the client: a longer outage is the processor's to wait out
        // (it pauses the partition and heartbeats while it backs off).
        timeoutMs: llm.timeoutMs ?? 60_000,
        maxAttempts: llm.maxAttempts ?? 2,
      });
}
