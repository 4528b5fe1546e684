import { readFileSync } from 'node:fs';
import { MEMORY_TYPES } from '@engram/contracts';
import {
  DEFAULT_DISTILLER_RETENTION,
  DEFAULT_DISTILLER_SESSION_LIMITS,
  DEFAULT_OBSERVER_SETTINGS,
  DEFAULT_RANKING_CONFIG,
  DEFAULT_SEGMENTER_SETTINGS,
  MisconfigurationError,
  TOOL_KINDS,
  UNIVERSAL_PHASES,
  observerSettings,
  rankingConfig,
  segmenterSettings,
  type DistillerRetention,
  type DistillerSessionLimits,
  type ObserverSettings,
  type RankingConfig,
  type RankingConfigOverrides,
  type SegmenterSettings,
} from '@engram/core';
import { z } from 'zod';

/**
 * The tunable sections of the configuration: the defaults (the tables in libs/core), then the
 * optional JSON file named by ENGRAM_CONFIG_FILE, then the few environment variables of the
 * most-tuned knobs (engram-config.ts). Each section of the file overrides any subset of its keys;
 * an unknown key or a bad value stops start-up naming the key's path, and the merged sections go
 * through core's own validation (validateRankingConfig, observerSettings, segmenterSettings).
 */
export interface SettingsSections {
  ranking: RankingConfig;
  observer: ObserverSettings;
  segmenter: SegmenterSettings;
  distiller: { limits: DistillerSessionLimits; retention: DistillerRetention };
}

/** What the config file may hold: every section optional, every key of a section optional. */
export type SettingsFile = {
  ranking?: RankingConfigOverrides;
  observer?: DeepPartial<ObserverSettings>;
  segmenter?: Partial<SegmenterSettings>;
  distiller?: { limits?: Partial<DistillerSessionLimits>; retention?: Partial<DistillerRetention> };
};

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

/**
 * A strict schema shaped like a defaults table: each key optional, of its default's type; a
 * table whose default is empty is a free map (validated by `maps`); `special` replaces the schema
 * of a key (enums, maps with known keys).
 */
function overridesOf(
  defaults: object,
  special: Record<string, z.ZodType> = {},
  at = '',
): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, value] of Object.entries(defaults)) {
    const path = at === '' ? key : `${at}.${key}`;
    shape[key] = (special[path] ?? leafOf(value, special, path)).optional();
  }
  return z.strictObject(shape);
}

function leafOf(value: unknown, special: Record<string, z.ZodType>, path: string): z.ZodType {
  if (typeof value === 'number') return z.number();
  if (typeof value === 'string') return z.string();
  if (typeof value === 'boolean') return z.boolean();
  if (Array.isArray(value)) {
    return z.array(value.length > 0 ? leafOf(value[0], special, path) : z.unknown());
  }
  if (value !== null && typeof value === 'object') return overridesOf(value, special, path);
  return z.unknown();
}

const memoryTypes = z.enum(MEMORY_TYPES);
const phaseRow = z.partialRecord(memoryTypes, z.number());
const minutesByName = z.record(z.string().min(1), z.number().positive());

const FILE_SCHEMA = z.strictObject({
  ranking: overridesOf(DEFAULT_RANKING_CONFIG, {
    phaseWeights: z.strictObject(
      Object.fromEntries(UNIVERSAL_PHASES.map((phase) => [phase, phaseRow.optional()])),
    ),
    'injection.types': z.array(memoryTypes),
    'causal.types': z.array(memoryTypes),
  }).optional(),
  observer: overridesOf(DEFAULT_OBSERVER_SETTINGS, {
    toolKinds: z.record(z.string().min(1), z.enum(TOOL_KINDS)),
  }).optional(),
  segmenter: overridesOf(DEFAULT_SEGMENTER_SETTINGS, {
    mode: z.enum(['keyword', 'hybrid']),
    hybridRule: z.enum(['blend', 'learned']),
    inactivityTimeoutByChannel: minutesByName,
    inactivityTimeoutByTenant: minutesByName,
  }).optional(),
  distiller: z
    .strictObject({
      limits: overridesOf(DEFAULT_DISTILLER_SESSION_LIMITS, positiveInts('limits'), 'limits'),
      retention: overridesOf(DEFAULT_DISTILLER_RETENTION, positiveInts('retention'), 'retention'),
    })
    .partial()
    .optional(),
});

/** The distiller's limits and retention are counts and durations: integers >= 1. */
function positiveInts(at: 'limits' | 'retention'): Record<string, z.ZodType> {
  const defaults = at === 'limits' ? DEFAULT_DISTILLER_SESSION_LIMITS : DEFAULT_DISTILLER_RETENTION;
  return Object.fromEntries(
    Object.keys(defaults).map((key) => [`${at}.${key}`, z.number().int().min(1)]),
  );
}

/**
 * The config file's sections, validated; problems name the key path (`ranking.priors.share`,
 * `segmenter.fooBar: unknown key`). A missing, unreadable or non-JSON file is a problem too.
 */
export function readSettingsFile(
  path: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): { file?: SettingsFile; problems: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(read(path));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { problems: [`ENGRAM_CONFIG_FILE: cannot read ${path} as JSON: ${reason}`] };
  }
  const parsed = FILE_SCHEMA.safeParse(json);
  if (parsed.success) return { file: parsed.data as SettingsFile, problems: [] };
  return {
    problems: parsed.error.issues.flatMap((issue) => {
      const at = issue.path.map(String);
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => `${path}: ${[...at, key].join('.')}: unknown key`);
      }
      return [`${path}: ${at.join('.') || '(top level)'}: ${issue.message}`];
    }),
  };
}

/** The environment's overrides of the most-tuned knobs, applied over the file's. */
export interface SettingsEnvOverrides {
  ranking: RankingConfigOverrides;
  observer: Partial<ObserverSettings>;
  segmenter: Partial<SegmenterSettings>;
}

/** defaults ← file ← environment, each section validated by core; problems name the key. */
export function mergeSettings(
  file: SettingsFile,
  env: SettingsEnvOverrides,
  source: string,
): { sections?: SettingsSections; problems: string[] } {
  const problems: string[] = [];
  const checked = <T>(section: string, build: () => T): T | undefined => {
    try {
      return build();
    } catch (error) {
      if (!(error instanceof MisconfigurationError)) throw error;
      problems.push(`${source}: ${section}: ${error.message}`);
      return undefined;
    }
  };
  const ranking = checked('ranking', () =>
    rankingConfig(mergeRankingOverrides(file.ranking ?? {}, env.ranking)),
  );
  const observer = checked('observer', () =>
    observerSettings({ ...deepMerge(DEFAULT_OBSERVER_SETTINGS, file.observer), ...env.observer }),
  );
  const segmenter = checked('segmenter', () =>
    segmenterSettings({ ...file.segmenter, ...env.segmenter }),
  );
  const distiller = {
    limits: { ...DEFAULT_DISTILLER_SESSION_LIMITS, ...file.distiller?.limits },
    retention: { ...DEFAULT_DISTILLER_RETENTION, ...file.distiller?.retention },
  };
  if (!ranking || !observer || !segmenter) return { problems };
  return { sections: { ranking, observer, segmenter, distiller }, problems };
}

function mergeRankingOverrides(
  file: RankingConfigOverrides,
  env: RankingConfigOverrides,
): RankingConfigOverrides {
  return { ...file, ...env, priors: { ...file.priors, ...env.priors } };
}

/** One level deeper than a spread: nested tables (frequencyThresholds, promotionCaps) merge. */
function deepMerge<T extends object>(base: T, overrides: DeepPartial<T> | undefined): T {
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    const current = merged[key];
    const nested =
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      current !== null &&
      typeof current === 'object' &&
      !Array.isArray(current);
    merged[key] = nested ? { ...current, ...value } : value;
  }
  return merged as T;
}
