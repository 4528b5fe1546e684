// The layering rules of .dependency-cruiser.cjs, which `npm run lint` runs (`npm run lint:layers`):
// each shown failing on a deliberate violation (test/fixtures/layering, laid out like the
// repository), and the real tree shown clean of all but the known, listed type-only cycles.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  cruise,
  type IConfiguration,
  type ICruiseOptions,
  type ICruiseResult,
  type IViolation,
} from 'dependency-cruiser';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'layering');

/** The project's configuration, as `depcruise --config .dependency-cruiser.cjs` reads it. */
function projectOptions(): ICruiseOptions {
  const config = createRequire(join(ROOT, 'package.json'))(
    './.dependency-cruiser.cjs',
  ) as IConfiguration;
  return { ...config.options, ruleSet: { forbidden: config.forbidden }, validate: true };
}

/** tsconfig.json parsed (what lets dependency-cruiser resolve the @engram/* aliases). */
function tsConfig(file: string): ts.ParsedCommandLine {
  const { config } = ts.readConfigFile(file, (path) => ts.sys.readFile(path)) as {
    config: unknown;
  };
  return ts.parseJsonConfigFileContent(config, ts.sys, dirname(file), {}, file);
}

async function cruised(
  paths: string[],
  options: ICruiseOptions,
  tsConfigFile?: string,
): Promise<ICruiseResult> {
  const result = await cruise(
    paths,
    options,
    {},
    tsConfigFile ? { tsConfig: tsConfig(tsConfigFile) } : {},
  );
  return result.output as ICruiseResult;
}

/** `rule: from → to` for each violation (a cycle's `to` is where it closes). */
function described(violations: IViolation[]): string[] {
  return violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

describe('layering rules on deliberate violations (test/fixtures/layering)', () => {
  let violations: string[];

  beforeAll(async () => {
    const result = await cruised(['libs', 'apps'], {
      ...projectOptions(),
      // The fixtures import each other by relative paths only: no tsconfig aliases to resolve.
      tsConfig: undefined,
      baseDir: FIXTURES,
    });
    violations = described(result.summary.violations);
  }, 60_000);

  it('should report a core file importing a driver (kafkajs) or doing file I/O (node:fs)', () => {
    // The fixtures sit three folders below the repository's node_modules.
    expect(violations).toContain(
      'core-no-io: libs/core/src/uses-kafka.ts → ../../../node_modules/kafkajs/index.js',
    );
    expect(violations).toContain('core-no-io: libs/core/src/reads-files.ts → fs');
  });

  it('should report a lib importing an app', () => {
    expect(violations).toContain(
      'libs-not-to-apps: libs/kafka/src/uses-app.ts → apps/segmenter/src/stage.ts',
    );
  });

  it('should report a two-file import cycle (once)', () => {
    expect(violations.filter((v) => v.startsWith('no-circular: '))).toEqual([
      'no-circular: libs/core/src/cycle-a.ts → libs/core/src/cycle-b.ts',
    ]);
  });

  it('should report a cycle through a type-only import under its own rule', () => {
    expect(violations).toContain(
      'no-circular-via-types: libs/core/src/types-a.ts → libs/core/src/types-b.ts',
    );
    expect(violations.filter((v) => v.startsWith('no-circular: libs/core/src/types-'))).toEqual([]);
  });

  it('should report the contracts importing the core', () => {
    expect(violations).toContain(
      'contracts-only-schemas: libs/contracts/src/uses-core.ts → libs/core/src/pure.ts',
    );
  });

  it('should report an embedded adapter importing the Kafka lib', () => {
    expect(violations).toContain(
      'embedded-no-distributed-drivers: libs/embedded/src/uses-kafka-lib.ts → libs/kafka/src/uses-app.ts',
    );
  });

  it('should report a service topology importing an adapter lib (it must take providers)', () => {
    expect(violations).toContain(
      'topology-mode-neutral: apps/observer/src/observer.topology.ts → libs/kafka/src/uses-app.ts',
    );
  });

  it("should report an app importing another app's internals by a relative path", () => {
    expect(violations).toContain(
      'apps-cross-import-through-alias: apps/engram/src/cli.ts → apps/segmenter/src/stage.ts',
    );
    expect(violations).toContain(
      'apps-cross-import-public-entry: apps/engram/src/cli.ts → apps/segmenter/src/stage.ts',
    );
  });

  it('should report nothing else (the allowed imports pass)', () => {
    expect(violations.filter((v) => v.includes('pure.ts →') || v.includes('schema.ts'))).toEqual(
      [],
    );
    expect(violations).toHaveLength(10);
  });
});

describe('layering rules on the real tree (apps, libs)', () => {
  it('should find no violation but the known type-only cycles', async () => {
    const knownViolations = JSON.parse(
      readFileSync(join(ROOT, '.dependency-cruiser-known-violations.json'), 'utf8'),
    ) as IViolation[];
    const result = await cruised(
      ['apps', 'libs'],
      { ...projectOptions(), baseDir: ROOT, knownViolations },
      join(ROOT, 'tsconfig.json'),
    );

    expect(
      described(result.summary.violations.filter((v) => v.rule.severity !== 'ignore')),
    ).toEqual([]);
    expect(knownViolations.every((v) => v.rule.name === 'no-circular-via-types')).toBe(true);
    // The check is not vacuous: apps reach each other through their aliases.
    const aliased = result.modules
      .flatMap((m) => m.dependencies.map((d) => ({ from: m.source, ...d })))
      .filter((d) => d.from.startsWith('apps/engram/') && d.resolved.startsWith('apps/retrieval/'));
    expect(aliased.length).toBeGreaterThan(0);
    expect(aliased.every((d) => d.dependencyTypes.includes('aliased-tsconfig-paths'))).toBe(true);
  }, 60_000);
});
