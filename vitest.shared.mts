// Shared by every vitest tier: SWC (so NestJS decorator metadata survives), the @engram/* aliases
// of tsconfig.json, and a fixed time zone.
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import type { ViteUserConfig as UserConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
const libs = [
  'core',
  'contracts',
  'errors',
  'config',
  'kafka',
  'elasticsearch',
  'neo4j',
  'embedded',
  'ai',
  'grpc',
  'metrics',
];
// Apps other apps may import, through their public entry (src/index.ts; src/testing/index.ts for
// test helpers) only: `@engram/app-retrieval`, `@engram/app-retrieval/testing`, ….
const apps = ['segmenter', 'observer', 'distiller', 'retrieval'];
// Narrow entries that are not an index (listed before the app aliases, which would match first).
const appEntries = {
  // `engram hook` loads only the embedded recall stack, not the whole retrieval app (~100 ms).
  '@engram/app-retrieval/embedded': 'apps/retrieval/src/hook-entry',
};

process.env.TZ = 'UTC';

export const sharedConfig: UserConfig = {
  root,
  plugins: [
    swc.vite({
      swcrc: false,
      module: { type: 'es6' },
      jsc: {
        target: 'es2022',
        parser: { syntax: 'typescript', decorators: true },
        transform: {
          legacyDecorator: true,
          decoratorMetadata: true,
          useDefineForClassFields: false,
        },
        keepClassNames: true,
      },
    }),
  ],
  resolve: {
    alias: Object.fromEntries([
      ...Object.entries(appEntries).map(([name, path]) => [name, `${root}${path}`]),
      ...libs.map((lib) => [`@engram/${lib}`, `${root}libs/${lib}/src`]),
      ...apps.map((app) => [`@engram/app-${app}`, `${root}apps/${app}/src`]),
    ]),
  },
};
