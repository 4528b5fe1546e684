import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import type { Embedder } from './embedder';
import { EmbedderModule, SharedEmbedder } from './embedder.module';

const fakeEmbedder = { modelId: 'fake', dims: 1 } as unknown as Embedder;

@Injectable()
class FirstService {
  constructor(readonly embedders: SharedEmbedder) {}
}
@Module({ imports: [EmbedderModule], providers: [FirstService] })
class FirstModule {}

@Injectable()
class SecondService {
  constructor(readonly embedders: SharedEmbedder) {}
}
@Module({ imports: [EmbedderModule], providers: [SecondService] })
class SecondModule {}

@Module({ imports: [FirstModule, SecondModule] })
class BothModule {}

describe('EmbedderModule', () => {
  it('should give every module of one application the same SharedEmbedder', async () => {
    const app = await NestFactory.createApplicationContext(BothModule, { logger: false });
    try {
      expect(app.get(FirstService).embedders).toBe(app.get(SecondService).embedders);
    } finally {
      await app.close();
    }
  });

  it('should load the model once however many services ask, and not before the first ask', async () => {
    let loads = 0;
    const shared = new SharedEmbedder(() => {
      loads += 1;
      return Promise.resolve(fakeEmbedder);
    });
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([shared.get(), shared.get()]);
    await shared.get();
    expect(loads).toBe(1);
    expect(a).toBe(fakeEmbedder);
    expect(b).toBe(fakeEmbedder);
  });

  it('should try again after a failed load instead of keeping the failure', async () => {
    let loads = 0;
    const shared = new SharedEmbedder(() => {
      loads += 1;
      return loads === 1 ? Promise.reject(new Error('no model')) : Promise.resolve(fakeEmbedder);
    });
    await expect(shared.get()).rejects.toThrow('no model');
    await expect(shared.get()).resolves.toBe(fakeEmbedder);
    expect(loads).toBe(2);
  });
});
