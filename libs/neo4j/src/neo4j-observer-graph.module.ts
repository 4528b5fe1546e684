import { ENGRAM_CONFIG, OBSERVER_GRAPH, type EngramConfig } from '@engram/config';
import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { openObserverGraph, type OpenedObserverGraph } from './observer-graph-connection';
import type { Neo4jObserverGraphWriter } from './observer-graph-writer';

/** The graph opened for the application context, closed on application shutdown (after the services). */
@Injectable()
export class Neo4jObserverGraphConnection implements OnApplicationShutdown {
  private opened?: Promise<OpenedObserverGraph>;

  constructor(@Inject(ENGRAM_CONFIG) private readonly config: EngramConfig) {}

  async writer(): Promise<Neo4jObserverGraphWriter> {
    this.opened ??= openObserverGraph(this.config.neo4j, this.config.observer);
    return (await this.opened).writer;
  }

  async onApplicationShutdown(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    await (await opened?.catch(() => undefined))?.close();
  }
}

/** Distributed mode's OBSERVER_GRAPH: the observer's graph on Neo4j (EngramConfig.neo4j). */
@Global()
@Module({
  providers: [
    Neo4jObserverGraphConnection,
    {
      provide: OBSERVER_GRAPH,
      useFactory: (connection: Neo4jObserverGraphConnection) => connection.writer(),
      inject: [Neo4jObserverGraphConnection],
    },
  ],
  exports: [OBSERVER_GRAPH],
})
export class Neo4jObserverGraphModule {}
