// Layering rules for Engram, checked by `npm run lint` (`npm run lint:layers`) and by
// test/unit/layering.spec.ts, which shows each rule failing on a deliberate violation.
//
//   apps/engram ──▶ apps/{segmenter,observer,distiller,retrieval}   (through @engram/app-* only)
//        │                        │
//        ▼                        ▼
//   libs/{kafka,elasticsearch,neo4j,embedded,ai,config,grpc,metrics}   (adapters; never import apps)
//        │
//        ▼
//   libs/core (pure: no I/O, no drivers) ──▶ libs/contracts (schemas) ──▶ libs/errors
//
// Paths are relative to the repository root; `@engram/*` aliases are resolved through tsconfig.json.

/** Node built-ins that do I/O or start processes: the pure core never touches them. */
const NODE_IO = [
  'fs',
  'fs/promises',
  'net',
  'http',
  'https',
  'http2',
  'child_process',
  'cluster',
  'dgram',
  'dns',
  'tls',
  'readline',
  'worker_threads',
  'os',
  'process',
  'inspector',
  'repl',
  'v8',
  'vm',
];
/** Drivers and frameworks (npm packages) that belong to adapters and apps, never to the core. */
const DRIVERS = [
  'kafkajs',
  '@kafkajs/confluent-schema-registry',
  '@elastic/elasticsearch',
  'neo4j-driver',
  'better-sqlite3',
  'usearch',
  'onnxruntime-node',
  '@huggingface/tokenizers',
  '@nestjs/[^/]+',
  '@grpc/[^/]+',
  'grpc-health-check',
  'prom-client',
];
/** Kafka and Elasticsearch (and Neo4j) code that the embedded (SQLite) adapters must not need. */
const DISTRIBUTED_DRIVERS = [
  'kafkajs',
  '@kafkajs/confluent-schema-registry',
  '@elastic/elasticsearch',
  'neo4j-driver',
];

const either = (names) => `(${names.join('|')})`;
/** A package, resolved (node_modules/<name>/…) or not (the bare name). */
const npmPackage = (names) => `(^|node_modules/)${either(names)}(/|$)`;
/** A Node built-in, written with or without the `node:` prefix. */
const nodeBuiltin = (names) => `^(node:)?${either(names)}$`;
const APPS = ['segmenter', 'observer', 'distiller', 'retrieval', 'engram'];
/** A module of an app; `$1` in a `to` rule is that app. */
const FROM_AN_APP = { path: `^apps/(${APPS.join('|')})/` };
/** What an app may import from another app (through its alias in tsconfig.json). */
const PUBLIC_APP_ENTRIES = [
  '^apps/[^/]+/src/index\\.ts$', // @engram/app-<app>
  '^apps/[^/]+/src/testing/index\\.ts$', // @engram/app-<app>/testing: test helpers
  // @engram/app-retrieval/embedded: `engram hook` loads the embedded recall stack alone, not the
  // whole retrieval app (NestJS modules, gRPC server): ~100 ms less on every hook.
  '^apps/retrieval/src/hook-entry\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Import cycle. Modules in a cycle cannot be understood, tested or loaded one at a time ' +
        '(and CommonJS hands one of them a half-initialised module). Move the shared part down a ' +
        'layer (as the error classes moved from libs/core to libs/errors) or invert the dependency.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-via-types',
      severity: 'error',
      comment:
        'Import cycle through a type-only import: harmless at run time (the import is erased) but ' +
        'still two modules that cannot be read one without the other. Move the shared types to ' +
        'their own module. The cycles that predate this rule are listed in ' +
        '.dependency-cruiser-known-violations.json (npm run lint:layers ignores those, and only ' +
        'those); remove an entry when its cycle is gone.',
      from: {},
      to: { circular: true, via: { dependencyTypes: ['type-only'] } },
    },
    {
      name: 'libs-not-to-apps',
      severity: 'error',
      comment:
        'A lib imports an app. Libs are the layer below the apps: move the code the lib needs ' +
        'into a lib (shared gRPC pieces live in libs/grpc), or pass it in from the app.',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'core-no-io',
      severity: 'error',
      comment:
        'libs/core is the pure domain: no I/O built-ins (fs, net, http, child_process, …), no ' +
        'drivers (kafkajs, Elasticsearch, Neo4j, SQLite, usearch, ONNX) and no frameworks (NestJS, ' +
        'gRPC). Put the I/O in an adapter lib behind a port in libs/core/src/ports. ' +
        'Specs may read their fixture files.',
      from: { path: '^libs/core/', pathNot: '\\.spec\\.ts$' },
      to: {
        dependencyTypes: [
          'core',
          'npm',
          'npm-dev',
          'npm-optional',
          'npm-peer',
          'npm-no-pkg',
          'unknown',
        ],
        path: [nodeBuiltin(NODE_IO), npmPackage(DRIVERS)],
      },
    },
    {
      name: 'core-only-contracts',
      severity: 'error',
      comment:
        'libs/core may depend on no lib of ours but @engram/contracts and @engram/errors: ' +
        'adapters, configuration and AI clients depend on the core, not the other way round.',
      from: { path: '^libs/core/' },
      to: { path: '^libs/', pathNot: '^libs/(core|contracts|errors)/' },
    },
    {
      name: 'contracts-only-schemas',
      severity: 'error',
      comment:
        'libs/contracts holds the event schemas and generated/schema code; of our code it may ' +
        'import only @engram/errors (importing @engram/core made a 110-file cycle with the core).',
      from: { path: '^libs/contracts/' },
      to: { path: '^(libs|apps)/', pathNot: '^libs/(contracts|errors)/' },
    },
    {
      name: 'errors-standalone',
      severity: 'error',
      comment: 'libs/errors is the bottom layer: the error taxonomy imports nothing of ours.',
      from: { path: '^libs/errors/' },
      to: { path: '^(libs|apps)/', pathNot: '^libs/errors/' },
    },
    {
      name: 'embedded-no-distributed-drivers',
      severity: 'error',
      comment:
        'The embedded (SQLite) adapters run without Kafka, Elasticsearch or Neo4j: they must not ' +
        'import @engram/kafka, @engram/elasticsearch, @engram/neo4j or their drivers. Shared ' +
        'logic belongs in libs/core.',
      from: { path: '^libs/embedded/' },
      to: {
        path: ['^libs/(kafka|elasticsearch|neo4j)/', npmPackage(DISTRIBUTED_DRIVERS)],
      },
    },
    {
      name: 'topology-mode-neutral',
      severity: 'error',
      comment:
        'A service topology (apps/<app>/src/*.topology.ts) is defined once for both modes: the ' +
        'stream platform, stores, graph and clients are providers its caller passes. It must not ' +
        'import an adapter lib (@engram/kafka, -embedded, -elasticsearch, -neo4j) or a driver.',
      from: { path: '^apps/[^/]+/src/.+[.]topology[.]ts$' },
      to: {
        path: [
          '^libs/(kafka|embedded|elasticsearch|neo4j)/',
          npmPackage([...DISTRIBUTED_DRIVERS, 'better-sqlite3']),
        ],
      },
    },
    {
      name: 'apps-cross-import-through-alias',
      severity: 'error',
      comment:
        'An app imports another app by a relative path. Import it through its package alias ' +
        '(@engram/app-segmenter, -observer, -distiller, -retrieval), which exposes only what ' +
        'apps/<app>/src/index.ts (or src/testing/index.ts for test helpers) exports; code several ' +
        'apps share belongs in a lib.',
      from: FROM_AN_APP,
      to: {
        path: '^apps/',
        pathNot: ['^apps/$1/'],
        dependencyTypesNot: ['aliased-tsconfig-paths'],
      },
    },
    {
      name: 'apps-cross-import-public-entry',
      severity: 'error',
      comment:
        "Another app's internals: only apps/<app>/src/index.ts, src/testing/index.ts (and the " +
        'narrow entries in PUBLIC_APP_ENTRIES) are public. Export what you need from there.',
      from: FROM_AN_APP,
      to: {
        path: '^apps/',
        pathNot: ['^apps/$1/', ...PUBLIC_APP_ENTRIES],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Build output only: node_modules stays visible (as leaves: doNotFollow) for the driver rules.
    exclude: { path: '(^|/)dist/' },
    // Type-only imports are seen too (erased at run time): cycles through them have their own rule.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
