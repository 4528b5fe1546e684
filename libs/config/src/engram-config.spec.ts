import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './engram-config';

describe('parseConfig', () => {
  it('should derive loopback defaults from the infra ports', () => {
    const config = parseConfig({ ENGRAM_KAFKA_PORT: '19092', ENGRAM_ES_PORT: '19200' });
    expect(config.kafka.brokers).toEqual(['127.0.0.1:19092']);
    expect(config.schemaRegistry.url).toBe('http://127.0.0.1:8081/apis/ccompat/v7');
    expect(config.elasticsearch.url).toBe('http://127.0.0.1:19200');
    expect(config.neo4j.url).toBe('bolt://127.0.0.1:7687');
  });

  it('should split a broker list', () => {
    const config = parseConfig({ ENGRAM_KAFKA_BROKERS: 'a:9092, b:9092' });
    expect(config.kafka.brokers).toEqual(['a:9092', 'b:9092']);
  });

  it('should take a consumer group session timeout (crash takeover) of at least a second', () => {
    expect(parseConfig({}).kafka.sessionTimeoutMs).toBe(30_000);
    expect(parseConfig({ ENGRAM_KAFKA_SESSION_TIMEOUT_MS: '8000' }).kafka.sessionTimeoutMs).toBe(
      8_000,
    );
    expect(() => parseConfig({ ENGRAM_KAFKA_SESSION_TIMEOUT_MS: '50' })).toThrow(
      /ENGRAM_KAFKA_SESSION_TIMEOUT_MS/,
    );
  });

  it('should name every bad setting and the fix', () => {
    const bad = () => parseConfig({ ENGRAM_ES_PORT: 'abc', ENGRAM_NEO4J_URL: 'http://x' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/ENGRAM_ES_PORT/);
    expect(bad).toThrow(/ENGRAM_NEO4J_URL/);
    expect(bad).toThrow(/fix:/);
  });

  it('should serve metrics on loopback port 9464 by default, and not at all on port 0', () => {
    expect(parseConfig({}).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(
      parseConfig({ ENGRAM_METRICS_HOST: '0.0.0.0', ENGRAM_METRICS_PORT: '9100' }).metrics,
    ).toEqual({ host: '0.0.0.0', port: 9100 });
    expect(parseConfig({ ENGRAM_METRICS_PORT: '0' }).metrics).toBeNull();
    expect(() => parseConfig({ ENGRAM_METRICS_PORT: '70000' })).toThrow(/ENGRAM_METRICS_PORT/);
  });

  it('should download the embedding model on first run unless ENGRAM_MODEL_DOWNLOAD is off', () => {
    expect(parseConfig({}).models).toEqual({ dir: null, download: true });
    expect(parseConfig({ ENGRAM_MODEL_DOWNLOAD: '0' }).models.download).toBe(false);
    expect(parseConfig({ ENGRAM_MODEL_DOWNLOAD: 'off' }).models.download).toBe(false);
    expect(parseConfig({ ENGRAM_MODELS_DIR: '/srv/models' }).models.dir).toBe('/srv/models');
    expect(() => parseConfig({ ENGRAM_MODEL_DOWNLOAD: 'maybe' })).toThrow(/ENGRAM_MODEL_DOWNLOAD/);
  });

  it('should point recall clients at the loopback recall API, with an optional token', () => {
    expect(parseConfig({}).recall).toEqual({ grpcUrl: '127.0.0.1:50051', token: undefined });
    expect(
      parseConfig({ ENGRAM_RECALL_GRPC_URL: 'recall.internal:7000', ENGRAM_RECALL_TOKEN: ' t1 ' })
        .recall,
    ).toEqual({ grpcUrl: 'recall.internal:7000', token: 't1' });
    expect(() => parseConfig({ ENGRAM_RECALL_GRPC_URL: 'http://x:1' })).toThrow(
      /ENGRAM_RECALL_GRPC_URL/,
    );
  });

  it("should give the distiller's review API a loopback port and the reflector a morning hour", () => {
    expect(parseConfig({}).distiller).toMatchObject({
      reviewGrpcUrl: '127.0.0.1:50052',
      reflectionHourUtc: 6,
    });
    expect(
      parseConfig({ ENGRAM_REVIEW_GRPC_URL: '0.0.0.0:6000', ENGRAM_REFLECTOR_HOUR_UTC: '0' })
        .distiller,
    ).toMatchObject({ reviewGrpcUrl: '0.0.0.0:6000', reflectionHourUtc: 0 });
    expect(() => parseConfig({ ENGRAM_REVIEW_GRPC_URL: 'http://x' })).toThrow(
      /ENGRAM_REVIEW_GRPC_URL/,
    );
    expect(() => parseConfig({ ENGRAM_REFLECTOR_HOUR_UTC: '24' })).toThrow(
      /ENGRAM_REFLECTOR_HOUR_UTC/,
    );
  });

  it('should configure an LLM only with a base URL and a model', () => {
    expect(parseConfig({}).llm).toBeNull();
    expect(
      parseConfig({ ENGRAM_LLM_BASE_URL: 'http://127.0.0.1:11434/v1', ENGRAM_LLM_MODEL: 'qwen' })
        .llm,
    ).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen', apiKey: undefined });
    expect(() => parseConfig({ ENGRAM_LLM_BASE_URL: 'http://127.0.0.1:11434/v1' })).toThrow(
      /ENGRAM_LLM_MODEL/,
    );
  });

  it('should read thread timeouts per channel and tenant, and refuse a malformed list', () => {
    const { segmenter } = parseConfig({
      ENGRAM_SEGMENTER_INACTIVITY_MINUTES: '20',
      ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES: 'channel:sms=240,tenant:acme=45',
    });
    expect(segmenter).toMatchObject({
      inactivityMinutes: 20,
      inactivityByChannel: { sms: 240 },
      inactivityByTenant: { acme: 45 },
    });
    expect(() => parseConfig({ ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES: 'sms=240' })).toThrow(
      /ENGRAM_SEGMENTER_INACTIVITY_OVERRIDES/,
    );
  });
});
