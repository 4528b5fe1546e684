import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
/** The @engram/* aliases of the build (.swcrc), so a new lib or app alias needs no change here. */
const PATHS = (
  JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8')) as {
    jsc: { paths: Record<string, string[]> };
  }
).jsc.paths;

/**
 * Writes a require hook into `dir` that compiles TypeScript on the fly with SWC (the repository's
 * compiler, with the @engram/* aliases), so tests can run a `.ts` script as a real child process —
 * to SIGKILL it — without building the repository first. Returns the node arguments to use.
 */
export function tsNodeArgs(dir: string, script: string, args: string[]): string[] {
  const hook = join(dir, 'swc-register.cjs');
  const options = {
    swcrc: false,
    module: { type: 'commonjs' },
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
      baseUrl: ROOT,
      paths: PATHS,
    },
  };
  writeFileSync(
    hook,
    `const fs = require('node:fs');
const { transformSync } = require(${JSON.stringify(join(ROOT, 'node_modules', '@swc', 'core'))});
const options = ${JSON.stringify(options)};
require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};
`,
  );
  return ['--require', hook, join(__dirname, script), ...args];
}
