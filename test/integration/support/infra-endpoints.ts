/** Where the integration servers are; provided by the global setup, read with `inject`. */
export interface InfraEndpoints {
  mode: 'local-processes' | 'testcontainers' | 'external';
  kafkaBrokers: string[];
  registryUrl: string;
  elasticsearchUrl: string;
  neo4jUrl: string;
  /** testcontainers only: the Kafka container, for outage tests (docker pause/stop). */
  kafkaContainerId?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    infra: InfraEndpoints;
  }
}
