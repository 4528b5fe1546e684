// Shared by every vitest tier: SWC (so NestJS decorator metadata survives), the @engram/* aliases
// of tsconfig.json, and a fixed time zone.
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import type { ViteUserConfig as UserConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
const libs = ['core', 'contracts', 'config', 'kafka', 'elasticsearch', 'neo4j', 'embedded', 'ai'];

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
    alias: Object.fromEntries(libs.map((lib) => [`@engram/${lib}`, `${root}libs/${lib}/src`])),
  },
};
