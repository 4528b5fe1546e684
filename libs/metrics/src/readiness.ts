import { errorMessage } from '@engram/errors';

/** True while the part it checks can do its work (a consumer in its group, a server listening). */
export type ReadinessCheck = () => boolean;

interface Entry {
  name: string;
  check: ReadinessCheck;
}

/**
 * The process's readiness checks: `/readyz` answers 200 only while every one passes. Each part
 * adds its check when it starts and removes it (the function `add` returns) when it stops.
 */
export class Readiness {
  private readonly entries = new Set<Entry>();

  /** Adds a check; returns the function that removes it. Several checks may share a name. */
  add(name: string, check: ReadinessCheck): () => void {
    const entry = { name, check };
    this.entries.add(entry);
    return () => this.entries.delete(entry);
  }

  /** The names of the checks that fail (a check that throws fails, its message appended). */
  failing(): string[] {
    const failing: string[] = [];
    for (const { name, check } of this.entries) {
      try {
        if (!check()) failing.push(name);
      } catch (error) {
        failing.push(`${name}: ${errorMessage(error)}`);
      }
    }
    return failing;
  }

  /** The names of every check, failing or not. */
  names(): string[] {
    return [...this.entries].map((entry) => entry.name);
  }
}
