import { z } from 'zod';
import {
  mergeSettings,
  readSettingsFile,
  type SettingsEnvOverrides,
  type SettingsFile,
  type SettingsSections,
} from './settings-sections';

/**
 * The one typed configuration object. Environment variables are read here and nowhere else
 * (lint enforces it); everything is validated once, and a bad value stops start-up with a message
 * naming the variable and the fix.
 */
const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

const envSchema = z.object({
  ENGRAM_SERVICE_NAME: z.string().min(1).default('engram'),
  ENGRAM_KAFKA_PORT: port(9092),
  ENGRAM_KAFKA_BROKERS: z.string().optional(),
  ENGRAM_KAFKA_CLIENT_ID: z.string().min(1).default('engram'),
  // How long the group waits for a silent (crashed) member before its partitions move to another
  // instance: lower means faster takeover after a crash, higher tolerates longer GC pauses. The
  // broker accepts 6 s to 30 min by default (group.min/max.session.timeout.ms).
  ENGRAM_KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  ENGRAM_REGISTRY_PORT: port(8081),
  ENGRAM_SCHEMA_REGISTRY_URL: z.url().optional(),
  ENGRAM_ES_PORT: port(9200),
  ENGRAM_ES_URL: z.url().optional(),
  ENGRAM_NEO4J_BOLT_PORT: port(7687),
  ENGRAM_NEO4J_URL: z
    .string()
    .regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\//)
    .optional(),
  ENGRAM_NEO4J_USER: z.string().optional(),
  ENGRAM_NEO4J_PASSWORD: z.string().optional(),
  ENGRAM_RETRY_INITIAL_MS: z.coerce.number().int().positive().default(200),
  ENGRAM_RETRY_MAX_MS: z.coerce.number().int().positive().default(30_000),
  ENGRAM_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only')
    .default(''),
  // Absent settings variables leave the config file's value (or the default) in place.
  ENGRAM_SEGMENTER_MODE: z.enum(['keyword', 'hybrid']).optional(),
  ENGRAM_SEGMENTER_RULE: z.enum(['blend', 'learned']).optional(),
  ENGRAM_SEGMENTER_THRESHOLD: z.coerce.number().min(0).max(1).optional(),
  ENGRAM_SEGMENTER_WINDOW: z.coerce.number().int().min(0).optional(),
  ENGRAM_SEGMENTER_GROUP_ID: z.string().min(1).default('engram-segmenter'),
  ENGRAM_SEGMENTER_INSTANCE_ID: z.string().min(1).default('0'),
  ENGRAM_INPUT_PARTITIONS: z.coerce.number().int().min(1).max(1000).optional(),
  /** The older name of ENGRAM_INPUT_PARTITIONS. */
  ENGRAM_SEGMENTER_PARTITIONS: z.coerce.number().int().min(1).max(1000).optional(),
  ENGRAM_SEGMENTER_SWEEP_MS: z.coerce.number().int().min(100).default(5_000),
  ENGRAM_SEGMENTER_INACTIVITY_MINUTES: z.coerce.number().positive().optional(),
  ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES: z
    .string()
    .regex(
      /^((channel|tenant):[^:=,]+=\d+(\.\d+)?)?(,(channel|tenant):[^:=,]+=\d+(\.\d+)?)*$/,
      'comma-separated channel:<name>=<minutes> or tenant:<id>=<minutes>',
    )
    .optional(),
  ENGRAM_OBSERVER_CO_ACCESS_WINDOW: z.coerce.number().int().min(1).optional(),
  ENGRAM_OBSERVER_PROMOTION_THRESHOLD: z.coerce.number().min(0).max(1).optional(),
  ENGRAM_OBSERVER_DEAD_END_THRESHOLD: z.coerce.number().min(0).max(1).optional(),
  ENGRAM_OBSERVER_WORK_UNIT_OUTCOME_RETENTION_DAYS: z.coerce.number().int().min(0).optional(),
  ENGRAM_RANKING_RRF_K: z.coerce.number().positive().optional(),
  ENGRAM_RANKING_PRIOR_SHARE: z.coerce.number().min(0).max(1).optional(),
  ENGRAM_RANKING_PHASE_EXPONENT: z.coerce.number().min(0).max(1).optional(),
  ENGRAM_CONFIG_FILE: z.string().trim().min(1).optional(),
  ENGRAM_REVIEW_GRPC_URL: z
    .string()
    .regex(/^[\w.-]+:\d{1,5}$|^\[[\da-fA-F:]+\]:\d{1,5}$/, 'host:port')
    .default('127.0.0.1:50052'),
  ENGRAM_RECALL_GRPC_URL: z
    .string()
    .regex(/^[\w.-]+:\d{1,5}$|^\[[\da-fA-F:]+\]:\d{1,5}$/, 'host:port')
    .default('127.0.0.1:50051'),
  ENGRAM_RECALL_TOKEN: z.string().trim().min(1).optional(),
  ENGRAM_GRPC_TOKEN: z.string().trim().min(1).optional(),
  ENGRAM_GRPC_TOKENS_FILE: z.string().trim().min(1).optional(),
  ENGRAM_REFLECTOR_HOUR_UTC: z.coerce.number().int().min(0).max(23).default(6),
  ENGRAM_LLM_BASE_URL: z.url().optional(),
  ENGRAM_LLM_MODEL: z.string().min(1).optional(),
  ENGRAM_LLM_API_KEY: z.string().min(1).optional(),
  // 0 turns the metrics and health endpoint off.
  ENGRAM_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  ENGRAM_METRICS_HOST: z
    .string()
    .regex(/^[\w.-]+$|^\[?[\da-fA-F:]+\]?$/, 'a host name or IP address')
    .default('127.0.0.1'),
  // The embedding model's cache root (default ~/.cache/engram/models) and whether the first
  // `engram demo` / `engram start` (and `npm ci`) may download it.
  ENGRAM_MODELS_DIR: z.string().trim().min(1).optional(),
  ENGRAM_MODEL_DOWNLOAD: z.enum(['0', '1', 'off', 'on', 'false', 'true']).default('on'),
});

export interface EngramConfig {
  serviceName: string;
  kafka: { brokers: string[]; clientId: string; sessionTimeoutMs: number };
  schemaRegistry: { url: string };
  elasticsearch: { url: string };
  neo4j: { url: string; user?: string; password?: string };
  retry: { initialMs: number; maxMs: number };
  /** Prepended to every topic name (one Kafka cluster, several isolated Engram installations). */
  topicPrefix: string;
  /**
   * The input topics' partition count (ENGRAM_INPUT_PARTITIONS; ENGRAM_SEGMENTER_PARTITIONS, its
   * older name). One number for every service: the segmenter, observer, distiller and indexer
   * read co-partitioned topics (keyed by session), and a stage joins partition p of one topic with
   * partition p of another, so the count must stay equal across them.
   */
  inputs: { partitions: number };
  /** Ranking and retrieval (libs/core RankingConfig): config file section `ranking`. */
  ranking: SettingsSections['ranking'];
  /** The observer's thresholds (libs/core ObserverSettings): config file section `observer`. */
  observer: SettingsSections['observer'];
  segmenter: {
    /** The segmentation settings (libs/core SegmenterSettings): config file section `segmenter`. */
    settings: SettingsSections['segmenter'];
    /** = settings.mode. */
    mode: 'keyword' | 'hybrid';
    groupId: string;
    /** Stable per instance: its transactional id fences a restarted instance's predecessor. */
    instanceId: string;
    /** = inputs.partitions (kept for older callers). */
    partitions: number;
    sweepIntervalMs: number;
    /** = settings.inactivityTimeoutMinutes (seed 004: 30). */
    inactivityMinutes: number;
    inactivityByChannel: Record<string, number>;
    inactivityByTenant: Record<string, number>;
  };
  distiller: {
    /** Where the distiller serves the review API (engram.review.v1) in distributed mode. */
    reviewGrpcUrl: string;
    /** The UTC hour of a project's daily reflection (seed 001: a morning cron). */
    reflectionHourUtc: number;
    /** Config file section `distiller` (libs/core DistillerSessionLimits, DistillerRetention). */
    limits: SettingsSections['distiller']['limits'];
    retention: SettingsSections['distiller']['retention'];
  };
  /** The recall gRPC API (engram.recall.v1) as its clients see it (`engram hook --distributed`). */
  recall: {
    /** host:port of `engram start --distributed`'s recall server. */
    grpcUrl: string;
    /**
     * Sent as `authorization: Bearer <token>` by the `engram` commands that call gRPC (the hook's
     * context, `review --distributed`): ENGRAM_GRPC_TOKEN (ENGRAM_RECALL_TOKEN, its older name).
     */
    token?: string;
  };
  /**
   * The servers' side: the tokens file (ENGRAM_GRPC_TOKENS_FILE) every gRPC server of Engram
   * checks calls against (read it with grpcTokensOf); absent: no authentication, and the servers
   * refuse to listen anywhere but on loopback.
   */
  grpc: { tokensFile?: string };
  /** An OpenAI-compatible chat endpoint (Ollama, vLLM, OpenAI); null: Engram runs without one. */
  llm: { baseUrl: string; model: string; apiKey?: string } | null;
  /**
   * Where the process serves Prometheus `/metrics`, `/healthz` and `/readyz` (libs/metrics):
   * ENGRAM_METRICS_HOST (loopback by default; metrics hold no tenant data, so any address is
   * allowed) and ENGRAM_METRICS_PORT (9464); null when the port is 0 (off).
   */
  metrics: { host: string; port: number } | null;
  /**
   * The local embedding model: `dir`, the cache root `engram models install` fills
   * (ENGRAM_MODELS_DIR; null: ~/.cache/engram/models); `download`, whether a missing model is
   * fetched on first run (ENGRAM_MODEL_DOWNLOAD=0 or off: never).
   */
  models: { dir: string | null; download: boolean };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid Engram configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig(
  env: Record<string, string | undefined>,
  readFile?: (path: string) => string,
): EngramConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map(
        (issue) => `${issue.path.join('.')}: ${issue.message} (fix: set a valid value or unset it)`,
      ),
    );
  }
  const e = parsed.data;
  if (e.ENGRAM_LLM_BASE_URL && !e.ENGRAM_LLM_MODEL) {
    throw new ConfigError([
      'ENGRAM_LLM_MODEL: required when ENGRAM_LLM_BASE_URL is set (fix: name the model, e.g. llama3.1:8b)',
    ]);
  }
  const sections = settingsSections(e, readFile);
  const partitions = e.ENGRAM_INPUT_PARTITIONS ?? e.ENGRAM_SEGMENTER_PARTITIONS ?? 3;
  const segmenter = sections.segmenter;
  return {
    serviceName: e.ENGRAM_SERVICE_NAME,
    kafka: {
      brokers: (e.ENGRAM_KAFKA_BROKERS ?? `127.0.0.1:${e.ENGRAM_KAFKA_PORT}`)
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
      clientId: e.ENGRAM_KAFKA_CLIENT_ID,
      sessionTimeoutMs: e.ENGRAM_KAFKA_SESSION_TIMEOUT_MS,
    },
    schemaRegistry: {
      url:
        e.ENGRAM_SCHEMA_REGISTRY_URL ??
        `http://127.0.0.1:${e.ENGRAM_REGISTRY_PORT}/apis/ccompat/v7`,
    },
    elasticsearch: { url: e.ENGRAM_ES_URL ?? `http://127.0.0.1:${e.ENGRAM_ES_PORT}` },
    neo4j: {
      url: e.ENGRAM_NEO4J_URL ?? `bolt://127.0.0.1:${e.ENGRAM_NEO4J_BOLT_PORT}`,
      user: e.ENGRAM_NEO4J_USER,
      password: e.ENGRAM_NEO4J_PASSWORD,
    },
    retry: { initialMs: e.ENGRAM_RETRY_INITIAL_MS, maxMs: e.ENGRAM_RETRY_MAX_MS },
    topicPrefix: e.ENGRAM_TOPIC_PREFIX,
    inputs: { partitions },
    ranking: sections.ranking,
    observer: sections.observer,
    segmenter: {
      settings: segmenter,
      mode: segmenter.mode,
      groupId: e.ENGRAM_SEGMENTER_GROUP_ID,
      instanceId: e.ENGRAM_SEGMENTER_INSTANCE_ID,
      partitions,
      sweepIntervalMs: e.ENGRAM_SEGMENTER_SWEEP_MS,
      inactivityMinutes: segmenter.inactivityTimeoutMinutes,
      inactivityByChannel: { ...segmenter.inactivityTimeoutByChannel },
      inactivityByTenant: { ...segmenter.inactivityTimeoutByTenant },
    },
    distiller: {
      reviewGrpcUrl: e.ENGRAM_REVIEW_GRPC_URL,
      reflectionHourUtc: e.ENGRAM_REFLECTOR_HOUR_UTC,
      ...sections.distiller,
    },
    recall: {
      grpcUrl: e.ENGRAM_RECALL_GRPC_URL,
      token: e.ENGRAM_GRPC_TOKEN ?? e.ENGRAM_RECALL_TOKEN,
    },
    grpc: { tokensFile: e.ENGRAM_GRPC_TOKENS_FILE },
    llm:
      e.ENGRAM_LLM_BASE_URL && e.ENGRAM_LLM_MODEL
        ? {
            baseUrl: e.ENGRAM_LLM_BASE_URL,
            model: e.ENGRAM_LLM_MODEL,
            apiKey: e.ENGRAM_LLM_API_KEY,
          }
        : null,
    metrics:
      e.ENGRAM_METRICS_PORT === 0
        ? null
        : { host: e.ENGRAM_METRICS_HOST.replace(/^\[|\]$/g, ''), port: e.ENGRAM_METRICS_PORT },
    models: {
      dir: e.ENGRAM_MODELS_DIR ?? null,
      download: !['0', 'off', 'false'].includes(e.ENGRAM_MODEL_DOWNLOAD),
    },
  };
}

/**
 * The settings sections: core's defaults, the file (ENGRAM_CONFIG_FILE), then the variables of
 * the most-tuned knobs; any problem stops start-up naming the key path.
 */
function settingsSections(
  e: z.infer<typeof envSchema>,
  readFile?: (path: string) => string,
): SettingsSections {
  let file: SettingsFile = {};
  if (e.ENGRAM_CONFIG_FILE !== undefined) {
    const read = readSettingsFile(e.ENGRAM_CONFIG_FILE, readFile);
    if (read.problems.length > 0) throw new ConfigError(fixed(read.problems));
    file = read.file ?? {};
  }
  const merged = mergeSettings(file, envOverrides(e, file), e.ENGRAM_CONFIG_FILE ?? 'environment');
  if (!merged.sections) throw new ConfigError(fixed(merged.problems));
  return merged.sections;
}

function fixed(problems: string[]): string[] {
  return problems.map((problem) => `${problem} (fix: correct or remove the key)`);
}

/** The variables that override the file (an absent variable overrides nothing). */
function envOverrides(e: z.infer<typeof envSchema>, file: SettingsFile): SettingsEnvOverrides {
  const mode = e.ENGRAM_SEGMENTER_MODE ?? file.segmenter?.mode ?? 'hybrid';
  const segmenter: SettingsEnvOverrides['segmenter'] = { mode };
  if (e.ENGRAM_SEGMENTER_RULE !== undefined) segmenter.hybridRule = e.ENGRAM_SEGMENTER_RULE;
  if (e.ENGRAM_SEGMENTER_THRESHOLD !== undefined) {
    // The boundary threshold of the mode in use.
    segmenter[mode === 'hybrid' ? 'hybridThreshold' : 'boundaryThreshold'] =
      e.ENGRAM_SEGMENTER_THRESHOLD;
  }
  if (e.ENGRAM_SEGMENTER_WINDOW !== undefined) segmenter.hybridWindow = e.ENGRAM_SEGMENTER_WINDOW;
  if (e.ENGRAM_SEGMENTER_INACTIVITY_MINUTES !== undefined) {
    segmenter.inactivityTimeoutMinutes = e.ENGRAM_SEGMENTER_INACTIVITY_MINUTES;
  }
  if (e.ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES !== undefined) {
    const { byChannel, byTenant } = inactivityOverrides(e.ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES);
    segmenter.inactivityTimeoutByChannel = byChannel;
    segmenter.inactivityTimeoutByTenant = byTenant;
  }
  const observer: SettingsEnvOverrides['observer'] = {};
  if (e.ENGRAM_OBSERVER_CO_ACCESS_WINDOW !== undefined) {
    observer.coAccessWindowSteps = e.ENGRAM_OBSERVER_CO_ACCESS_WINDOW;
  }
  if (e.ENGRAM_OBSERVER_PROMOTION_THRESHOLD !== undefined) {
    observer.scoreThreshold = e.ENGRAM_OBSERVER_PROMOTION_THRESHOLD;
  }
  if (e.ENGRAM_OBSERVER_DEAD_END_THRESHOLD !== undefined) {
    observer.deadEndScoreThreshold = e.ENGRAM_OBSERVER_DEAD_END_THRESHOLD;
  }
  if (e.ENGRAM_OBSERVER_WORK_UNIT_OUTCOME_RETENTION_DAYS !== undefined) {
    observer.workUnitOutcomeRetentionDays = e.ENGRAM_OBSERVER_WORK_UNIT_OUTCOME_RETENTION_DAYS;
  }
  const ranking: SettingsEnvOverrides['ranking'] = {};
  if (e.ENGRAM_RANKING_RRF_K !== undefined) ranking.rrfK = e.ENGRAM_RANKING_RRF_K;
  const priors: NonNullable<SettingsEnvOverrides['ranking']['priors']> = {};
  if (e.ENGRAM_RANKING_PRIOR_SHARE !== undefined) priors.share = e.ENGRAM_RANKING_PRIOR_SHARE;
  if (e.ENGRAM_RANKING_PHASE_EXPONENT !== undefined) {
    priors.phaseExponent = e.ENGRAM_RANKING_PHASE_EXPONENT;
  }
  if (Object.keys(priors).length > 0) ranking.priors = priors;
  return { ranking, observer, segmenter };
}

/** `channel:sms=240,tenant:acme=45` → per-channel and per-tenant thread timeouts (minutes). */
function inactivityOverrides(text: string): {
  byChannel: Record<string, number>;
  byTenant: Record<string, number>;
} {
  const byChannel: Record<string, number> = {};
  const byTenant: Record<string, number> = {};
  for (const entry of text.split(',').filter(Boolean)) {
    const [scope, rest] = [entry.slice(0, entry.indexOf(':')), entry.slice(entry.indexOf(':') + 1)];
    const [name, minutes] = rest.split('=');
    (scope === 'channel' ? byChannel : byTenant)[name] = Number(minutes);
  }
  return { byChannel, byTenant };
}

let cached: EngramConfig | undefined;

/** The process-wide configuration, parsed from the environment on first use. */
export function loadConfig(): EngramConfig {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Tests only: forget the cached configuration. */
export function resetConfigForTests(): void {
  cached = undefined;
}
