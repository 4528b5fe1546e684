import { Global, Injectable, Module } from '@nestjs/common';
import { createEmbedder } from './create-embedder';
import type { Embedder } from './embedder';

/**
 * The process's one embedder (issue #18): every service module that embeds imports
 * EmbedderModule and asks SharedEmbedder for it, so `engram start --distributed`, which runs the
 * observer, the indexer and the recall server in one process, holds one ONNX session instead of
 * one per service. Loaded on first use: a service that embeds nothing (keyword segmentation)
 * never loads the model.
 */
@Injectable()
export class SharedEmbedder {
  private loading?: Promise<Embedder>;

  constructor(private readonly load: () => Promise<Embedder> = () => createEmbedder()) {}

  get(): Promise<Embedder> {
    if (!this.loading) {
      this.loading = this.load();
      // A failed load (missing model) is not cached: the next caller tries again.
      this.loading.catch(() => (this.loading = undefined));
    }
    return this.loading;
  }
}

/**
 * Nest keeps one instance of a module per application, so every importer shares the embedder;
 * global, as the other providers of the services' tokens (the service modules import none).
 */
@Global()
@Module({
  providers: [{ provide: SharedEmbedder, useFactory: () => new SharedEmbedder() }],
  exports: [SharedEmbedder],
})
export class EmbedderModule {}
