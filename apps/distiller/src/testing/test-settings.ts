import {
  DEFAULT_DISTILLER_RETENTION,
  DEFAULT_DISTILLER_SESSION_LIMITS,
  DEFAULT_SEGMENTER_SETTINGS,
} from '@engram/core';
import type { DistillerSettings } from '../distiller.stage';

/** Tests: the distiller's default settings, passed explicitly (the apps pass EngramConfig's). */
export function testDistillerSettings(
  overrides: Partial<DistillerSettings> = {},
): DistillerSettings {
  return {
    limits: DEFAULT_DISTILLER_SESSION_LIMITS,
    retention: DEFAULT_DISTILLER_RETENTION,
    prompts: DEFAULT_SEGMENTER_SETTINGS,
    ...overrides,
  };
}
