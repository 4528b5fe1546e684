import { ConfigModule, parseConfig, STREAM_PLATFORM } from '@engram/config';
import { SqliteEventLog } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Global,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { distributedEngramModule } from './distributed.module';
import { startEmbeddedServices } from './embedded-services';
import { engramRootModule } from './engram-root.module';

/**
 * `engram start`'s one root module in embedded mode: the services run on the providers, stop
 * before the providers close, and a start that fails half-way stops what it started.
 */
describe('engram root module, embedded providers', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-root-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('should stop every service (their consumer groups committed) before it closes the log', async () => {
    const dir = dataDir();
    const services = await startEmbeddedServices({
      config: parseConfig({}),
      dataDir: dir,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
      llm: null,
      sweepIntervalMs: 50,
    });
    expect(services.running).toEqual(['segmenter', 'observer', 'distiller', 'retrieval indexer']);
    expect(services.log.isOpen).toBe(true);
    await services.stop();
    // Had the log closed under a running service, its stop (drain, commit) would have thrown.
    expect(services.log.isOpen).toBe(false);
    // The same data dir opens again: no lock or handle is left behind.
    const again = SqliteEventLog.open({ dataDir: dir });
    again.close();
  });

  it('should fail with the cause and leave the data dir usable when a service cannot start', async () => {
    // The review API's address is taken: the distiller fails after the segmenter and the
    // observer started (those are stopped, the files closed).
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dir = dataDir();
    const options = {
      config: parseConfig({}),
      dataDir: dir,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
      llm: null,
    };
    try {
      await expect(
        startEmbeddedServices({ ...options, review: { url: `127.0.0.1:${port}`, tokens: null } }),
      ).rejects.toThrow();
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const again = await startEmbeddedServices(options);
    expect(again.running).toHaveLength(4);
    await again.stop();
  });
});

/**
 * Distributed mode's providers close in onApplicationShutdown and the services stop in
 * beforeApplicationShutdown: Nest runs every module's before-hooks first, whatever the modules'
 * order in the root module — checked here, as Nest runs it.
 */
describe('Nest shutdown order the distributed providers rely on', () => {
  it.each([
    ['providers first', true],
    ['providers last', false],
  ])('should stop the service before the provider closes (%s)', async (_name, providersFirst) => {
    const order: string[] = [];
    @Injectable()
    class Resource implements OnApplicationShutdown {
      onApplicationShutdown() {
        order.push('provider closed');
      }
    }
    @Global()
    @Module({ providers: [Resource], exports: [Resource] })
    class Providers {}
    @Injectable()
    class Service implements BeforeApplicationShutdown {
      constructor(readonly resource: Resource) {}
      beforeApplicationShutdown() {
        order.push('service stopped');
      }
    }
    @Module({ providers: [Service] })
    class Services {}
    @Module({})
    class Root {}
    const app = await NestFactory.createApplicationContext(
      { module: Root, imports: providersFirst ? [Providers, Services] : [Services, Providers] },
      { logger: false },
    );
    await app.close();
    expect(order).toEqual(['service stopped', 'provider closed']);
  });
});

describe('engram root module, distributed providers', () => {
  it('should resolve every service token from the distributed providers (Nest preview: nothing connects)', async () => {
    const app = await NestFactory.createApplicationContext(distributedEngramModule(), {
      preview: true,
      logger: false,
      abortOnError: false,
    });
    expect(app.get(STREAM_PLATFORM, { strict: false })).toBeDefined();
    await app.close();
  });

  it('should refuse a root module without the providers', async () => {
    await expect(
      NestFactory.createApplicationContext(engramRootModule([ConfigModule]), {
        preview: true,
        logger: false,
        abortOnError: false,
      }),
    ).rejects.toThrow(/STREAM_PLATFORM/);
  });
});
