// Prometheus metrics and HTTP health for every Engram process: one registry per process
// (processMetrics), the stream metrics the processors record, readiness checks, and the
// /metrics, /healthz, /readyz server (startMetricsServer; MetricsModule in Nest apps).
export * from './dead-letter-reason';
export * from './engram-metrics';
export * from './metrics-server';
export * from './metrics.module';
export * from './readiness';
