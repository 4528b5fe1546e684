import type { ModelVector } from '../../retrieval/model-vector';

// A deterministic embedder for the store contracts: one dimension per concept, so a paraphrase
// with no word in common is near in vector space and far lexically. Test support only.

export interface ContractEmbedder {
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

const CONCEPTS: readonly (readonly string[])[] = [
  ['auth', 'token', 'login', 'logout', 'signin', 'credential', 'credentials', 'session', 'mutex'],
  ['time', 'timer', 'timers', 'clock', 'date', 'fake', 'expiry', 'tick'],
  ['database', 'postgres', 'pool', 'connection', 'connections', 'sql', 'redis', 'cache'],
  ['webpack', 'build', 'bundle', 'bundler', 'openssl', 'node', 'compile'],
  ['css', 'layout', 'grid', 'mobile', 'screen', 'page', 'checkout'],
  ['kafka', 'consumer', 'offsets', 'rebalance', 'stream', 'partition'],
  ['billing', 'invoice', 'cron', 'nightly', 'payment'],
];

export const CONTRACT_MODEL = 'contract-concepts@1';

export function conceptVector(text: string): Float32Array {
  const vector = new Float32Array(CONCEPTS.length);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    CONCEPTS.forEach((words, i) => {
      if (words.includes(word)) vector[i] += 1;
    });
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((v) => v / length);
}

export function contractEmbedder(id = CONTRACT_MODEL): ContractEmbedder {
  return {
    id,
    dims: CONCEPTS.length,
    embed: (texts) => Promise.resolve(texts.map(conceptVector)),
  };
}

export function queryVector(text: string, model = CONTRACT_MODEL): ModelVector {
  return { model, dimension: CONCEPTS.length, vector: Array.from(conceptVector(text)) };
}
