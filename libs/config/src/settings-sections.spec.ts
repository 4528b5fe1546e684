import {
  DEFAULT_OBSERVER_SETTINGS,
  DEFAULT_RANKING_CONFIG,
  DEFAULT_SEGMENTER_SETTINGS,
} from '@engram/core';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './engram-config';

const withFile = (json: unknown, env: Record<string, string> = {}) =>
  parseConfig({ ENGRAM_CONFIG_FILE: '/etc/engram.json', ...env }, () => JSON.stringify(json));

describe('settings sections', () => {
  it("should default to core's tables (segmentation mode hybrid, as before)", () => {
    const config = parseConfig({});
    expect(config.ranking).toEqual(DEFAULT_RANKING_CONFIG);
    expect(config.observer).toEqual(DEFAULT_OBSERVER_SETTINGS);
    // Seed 002 §13: work_unit_outcome memories go 90 days post-merge.
    expect(config.observer.workUnitOutcomeRetentionDays).toBe(90);
    expect(config.segmenter.settings).toEqual({ ...DEFAULT_SEGMENTER_SETTINGS, mode: 'hybrid' });
    expect(config.inputs.partitions).toBe(3);
    expect(config.segmenter.partitions).toBe(3);
  });

  it('should merge a partial file over the defaults, nested tables key by key', () => {
    const config = withFile({
      ranking: { rrfK: 7, priors: { share: 0.3 }, phaseWeights: { validate: { gotcha: 2 } } },
      observer: { coAccessWindowSteps: 6, frequencyThresholds: { file_access: 5 } },
      segmenter: {
        mode: 'keyword',
        boundaryThreshold: 0.5,
        inactivityTimeoutByChannel: { sms: 240 },
      },
      distiller: { limits: { maxPrompts: 10 } },
    });
    expect(config.ranking.rrfK).toBe(7);
    expect(config.ranking.priors).toEqual({ share: 0.3, phaseExponent: 0.25 });
    expect(config.ranking.phaseWeights.validate.gotcha).toBe(2);
    expect(config.ranking.phaseWeights.validate.pattern).toBe(
      DEFAULT_RANKING_CONFIG.phaseWeights.validate.pattern,
    );
    expect(config.observer.coAccessWindowSteps).toBe(6);
    expect(config.observer.frequencyThresholds).toEqual({
      ...DEFAULT_OBSERVER_SETTINGS.frequencyThresholds,
      file_access: 5,
    });
    expect(config.segmenter.settings.mode).toBe('keyword');
    expect(config.segmenter.mode).toBe('keyword');
    expect(config.segmenter.inactivityByChannel).toEqual({ sms: 240 });
    expect(config.distiller.limits.maxPrompts).toBe(10);
  });

  it('should let the variables of the most-tuned knobs override the file', () => {
    const config = withFile(
      { ranking: { rrfK: 7 }, segmenter: { mode: 'keyword' } },
      {
        ENGRAM_RANKING_RRF_K: '12',
        ENGRAM_RANKING_PRIOR_SHARE: '0.2',
        ENGRAM_RANKING_PHASE_EXPONENT: '0.5',
        ENGRAM_SEGMENTER_MODE: 'hybrid',
        ENGRAM_SEGMENTER_RULE: 'blend',
        ENGRAM_SEGMENTER_THRESHOLD: '0.25',
        ENGRAM_SEGMENTER_WINDOW: '4',
        ENGRAM_OBSERVER_CO_ACCESS_WINDOW: '5',
        ENGRAM_OBSERVER_PROMOTION_THRESHOLD: '0.7',
        ENGRAM_OBSERVER_WORK_UNIT_OUTCOME_RETENTION_DAYS: '30',
        ENGRAM_INPUT_PARTITIONS: '6',
      },
    );
    expect(config.ranking.rrfK).toBe(12);
    expect(config.ranking.priors).toEqual({ share: 0.2, phaseExponent: 0.5 });
    expect(config.segmenter.settings).toMatchObject({
      mode: 'hybrid',
      hybridRule: 'blend',
      hybridThreshold: 0.25,
      hybridWindow: 4,
    });
    expect(config.observer).toMatchObject({
      coAccessWindowSteps: 5,
      scoreThreshold: 0.7,
      workUnitOutcomeRetentionDays: 30,
    });
    expect(config.inputs.partitions).toBe(6);
    expect(config.segmenter.partitions).toBe(6);
  });

  it('should name the key path of an unknown key and of a bad value', () => {
    const bad = () =>
      withFile({
        ranking: { priors: { shares: 0.1 }, rrfK: 'ten' },
        segmenter: { mode: 'semantic' },
        tuning: {},
      });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/\/etc\/engram\.json: ranking\.priors\.shares: unknown key/);
    expect(bad).toThrow(/ranking\.rrfK: /);
    expect(bad).toThrow(/segmenter\.mode: /);
    expect(bad).toThrow(/tuning: unknown key/);
  });

  it("should apply core's validation rules to the merged sections", () => {
    expect(() => withFile({ ranking: { priors: { share: 2 } } })).toThrow(
      /ranking config priors\.share: must be within \[0, 1\]/,
    );
    expect(() => withFile({ segmenter: { hybridThreshold: 3 } })).toThrow(
      /segmenter settings hybridThreshold/,
    );
    expect(() => withFile({ observer: { moduleDepth: 0 } })).toThrow(/observer moduleDepth/);
  });

  it('should refuse a missing or malformed file', () => {
    expect(() =>
      parseConfig({ ENGRAM_CONFIG_FILE: '/nope.json' }, () => {
        throw new Error('ENOENT');
      }),
    ).toThrow(/ENGRAM_CONFIG_FILE: cannot read \/nope\.json as JSON: ENOENT/);
    expect(() => parseConfig({ ENGRAM_CONFIG_FILE: '/x.json' }, () => '{')).toThrow(ConfigError);
  });
});
