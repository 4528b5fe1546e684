import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Index, MetricKind, ScalarKind } from 'usearch';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files';

// One HNSW graph (usearch) per tier, scope and model: a cache of the vectors SQLite holds, kept
// in files of the data directory. A file is named after the change-log sequence number it
// reflects (`<key>.<seq>.usearch`), written under a temporary name and renamed, so a reader
// never sees half a file and a crash loses at most the newest file: the change log brings an
// older one up to date, and no file at all means a rebuild from SQLite.

/** The graph's parameters; a change of them (or of the format) makes every file a stranger. */
export const ANN_PARAMETERS = {
  /** Edges per node (HNSW M). */
  connectivity: 16,
  /** Candidates kept while inserting (efConstruction). */
  expansionAdd: 128,
  /** Candidates kept while searching (ef); raised to `k` when a search asks for more. */
  expansionSearch: 128,
  format: 1,
} as const;

/** What an index is of: the file key hashes all of it, so no index serves another model. */
export interface AnnScope {
  /** The identity of the `retrieval.db` the graph caches. */
  store: string;
  tier: string;
  tenantId: string;
  projectId: string;
  model: string;
  dims: number;
}

export function annFileKey(scope: AnnScope): string {
  const identity = JSON.stringify([
    scope.store,
    scope.tier,
    scope.tenantId,
    scope.projectId,
    scope.model,
    scope.dims,
    ANN_PARAMETERS,
  ]);
  return createHash('sha256').update(identity).digest('hex').slice(0, 32);
}

export interface AnnHit {
  rid: number;
  cosine: number;
}

/** A usearch index of one scope, with the change-log position it reflects. */
export class AnnIndex {
  /** Changes applied since the last file was written. */
  private unsaved = 0;

  private constructor(
    private index: Index,
    readonly scope: AnnScope,
    private readonly dir: string,
    /** The change-log sequence number the graph reflects. */
    public seq: number,
    /** True while the graph is a read-only memory map of its file (usearch `view`). */
    private viewed: boolean,
  ) {}

  get size(): number {
    return this.index.size();
  }

  private static empty(dims: number): Index {
    return new Index({
      dimensions: dims,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: ANN_PARAMETERS.connectivity,
      expansion_add: ANN_PARAMETERS.expansionAdd,
      expansion_search: ANN_PARAMETERS.expansionSearch,
      multi: false,
    });
  }

  /** A graph of the given rows (rid → vector, rows × dims), built with every core. */
  static build(
    scope: AnnScope,
    dir: string,
    seq: number,
    rids: readonly number[],
    matrix: Float32Array,
  ): AnnIndex {
    const index = AnnIndex.empty(scope.dims);
    if (rids.length > 0) {
      index.add(BigUint64Array.from(rids, BigInt), matrix, availableParallelism());
    }
    const ann = new AnnIndex(index, scope, dir, seq, false);
    ann.unsaved = rids.length;
    ann.saveIfDue(0, true);
    return ann;
  }

  /**
   * The newest readable file of the scope, memory-mapped (no load time); a file that does not
   * read (torn, foreign, another dimension) is deleted. Null when none is left: rebuild.
   */
  static open(scope: AnnScope, dir: string): AnnIndex | null {
    for (const { seq, path } of annFiles(dir, annFileKey(scope))) {
      const index = AnnIndex.empty(scope.dims);
      try {
        index.view(path);
        // `view` adopts the file's dimension whatever the constructor said.
        if (index.dimensions() === scope.dims) return new AnnIndex(index, scope, dir, seq, true);
      } catch {
        // Unreadable: a rebuild or an older file replaces it.
      }
      rmSync(path, { force: true });
    }
    return null;
  }

  /**
   * Replaces the vectors of `upserts` and drops `removals` (rids), then records `seq`. A viewed
   * graph is loaded into memory first (a memory map cannot change).
   */
  apply(
    seq: number,
    removals: readonly number[],
    upserts: { rids: number[]; matrix: Float32Array },
  ): void {
    if (this.viewed) this.loadIntoMemory();
    for (const rid of [...removals, ...upserts.rids]) {
      const key = BigInt(rid);
      if (this.index.contains(key)) this.index.remove(key);
    }
    if (upserts.rids.length > 0) {
      this.index.add(BigUint64Array.from(upserts.rids, BigInt), upserts.matrix, 1);
    }
    this.unsaved += removals.length + upserts.rids.length;
    this.seq = seq;
  }

  private loadIntoMemory(): void {
    const loaded = AnnIndex.empty(this.scope.dims);
    loaded.load(annFiles(this.dir, annFileKey(this.scope))[0]?.path ?? '');
    this.index = loaded;
    this.viewed = false;
  }

  /** The `count` nearest rids (one search thread: recall runs beside the indexer). */
  search(query: Float32Array, count: number): AnnHit[] {
    if (this.index.size() === 0) return [];
    const matches = this.index.search(query, count, 1);
    const hits: AnnHit[] = [];
    matches.keys.forEach((key, i) => {
      // usearch pads a short answer with the maximum key; the cosine distance is 1 − cosine.
      if (key !== 0xffffffffffffffffn) {
        hits.push({ rid: Number(key), cosine: 1 - matches.distances[i] });
      }
    });
    return hits;
  }

  /**
   * Writes the file when enough changes are unsaved (`force`: any). A file that cannot be
   * written (read-only or full disk) is not an error: the graph is a cache, the next process
   * rebuilds or replays it, and the changes stay counted so a later call tries again.
   */
  saveIfDue(threshold: number, force = false): void {
    if (this.unsaved === 0 || (this.unsaved < threshold && !force)) return;
    const temporary = join(this.dir, `${annFileKey(this.scope)}.${process.pid}.tmp`);
    try {
      this.save(temporary);
      this.unsaved = 0;
    } catch {
      rmSync(temporary, { force: true });
    }
  }

  /** `<key>.<seq>.usearch` under a temporary name, renamed; older files of the scope deleted. */
  private save(temporary: string): void {
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const key = annFileKey(this.scope);
    this.index.save(temporary);
    // Private like the databases: vectors of the user's prompts and memories.
    chmodSync(temporary, PRIVATE_FILE_MODE);
    renameSync(temporary, join(this.dir, `${key}.${this.seq}.usearch`));
    writeFileSync(
      join(this.dir, `${key}.json`),
      JSON.stringify({ ...this.scope, ANN_PARAMETERS }),
      {
        mode: PRIVATE_FILE_MODE,
      },
    );
    for (const older of annFiles(this.dir, key)) {
      if (older.seq < this.seq) rmSync(older.path, { force: true });
    }
  }

  /** Deletes the scope's files (a graph that cannot be trusted). */
  discard(): void {
    for (const file of annFiles(this.dir, annFileKey(this.scope))) {
      rmSync(file.path, { force: true });
    }
  }

  /** Bytes of the newest file (benchmarks). */
  fileBytes(): number {
    const newest = annFiles(this.dir, annFileKey(this.scope))[0];
    return newest ? statSync(newest.path).size : 0;
  }
}

/** The scope's index files, newest first. */
function annFiles(dir: string, key: string): { seq: number; path: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const pattern = new RegExp(`^${key}\\.(\\d+)\\.usearch$`);
  return names
    .map((name) => ({ match: pattern.exec(name), name }))
    .filter(({ match }) => match !== null)
    .map(({ match, name }) => ({ seq: Number(match?.[1]), path: join(dir, name) }))
    .sort((a, b) => b.seq - a.seq);
}
