import { random } from './bench-observe';

/** The seeded randomness of `engram bench friction`'s generator (the same seed, the same data). */

export const WORDS = (
  'refresh token cache queue worker retry schema index query parser router handler session ' +
  'config logger metrics billing invoice account profile upload export report search filter ' +
  'payment webhook scheduler migration fixture layout button modal sidebar theme locale'
).split(' ');

export class Rng {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = random(seed);
  }
  next(): number {
    return this.random();
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  words(n: number): string {
    return Array.from({ length: n }, () => this.pick(WORDS)).join(' ');
  }
  /** Made-up words (noise that nothing else shares). */
  gibberish(n: number): string {
    const syllables = [
      'ka',
      'lo',
      'mi',
      'ter',
      'son',
      'vu',
      'dra',
      'pel',
      'qui',
      'zor',
      'ben',
      'fa',
    ];
    return Array.from({ length: n }, () =>
      Array.from({ length: 3 }, () => this.pick(syllables)).join(''),
    ).join(' ');
  }
}
