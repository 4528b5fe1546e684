import { GenericContainer, Network, Wait, type StartedTestContainer } from 'testcontainers';
import type { InfraEndpoints } from './infra-endpoints';

/**
 * The same four servers in Docker containers, for machines with a Docker engine. Images match
 * docker-compose.yml. (Not exercised on the project's Docker-less CI machines.)
 */
export async function startContainerInfra(): Promise<{
  endpoints: InfraEndpoints;
  stop: () => Promise<void>;
}> {
  const network = await new Network().start();
  const kafka = await new GenericContainer('apache/kafka:3.9.1')
    .withNetwork(network)
    .withNetworkAliases('kafka')
    .withExposedPorts({ container: 9092, host: 9092 })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,INTERNAL://:29092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://127.0.0.1:9092,INTERNAL://kafka:29092',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:
        'PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'INTERNAL',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@kafka:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  const registry = await new GenericContainer('apicurio/apicurio-registry:3.3.3')
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .start();
  const elasticsearch = await new GenericContainer(
    'docker.elastic.co/elasticsearch/elasticsearch:8.18.1',
  )
    .withExposedPorts(9200)
    .withEnvironment({
      'discovery.type': 'single-node',
      'xpack.security.enabled': 'false',
      ES_JAVA_OPTS: '-Xms512m -Xmx1g',
    })
    .withWaitStrategy(Wait.forHttp('/_cluster/health', 9200))
    .withStartupTimeout(180_000)
    .start();
  const neo4j = await new GenericContainer('neo4j:5.26-community')
    .withExposedPorts(7687, 7474)
    .withEnvironment({ NEO4J_AUTH: 'none' })
    .withWaitStrategy(Wait.forLogMessage(/Started\./))
    .start();
  const url = (c: StartedTestContainer, port: number) => `${c.getHost()}:${c.getMappedPort(port)}`;
  const containers = [neo4j, elasticsearch, registry, kafka];
  return {
    endpoints: {
      mode: 'testcontainers',
      kafkaBrokers: ['127.0.0.1:9092'],
      registryUrl: `http://${url(registry, 8080)}/apis/ccompat/v7`,
      elasticsearchUrl: `http://${url(elasticsearch, 9200)}`,
      neo4jUrl: `bolt://${url(neo4j, 7687)}`,
      kafkaContainerId: kafka.getId(),
    },
    stop: async () => {
      for (const container of containers) await container.stop();
      await network.stop();
    },
  };
}
