#!/usr/bin/env bash
# Runs the embedder benchmark without a TypeScript runner: compiles it and libs/ with the repo's
# own swc (.swcrc, as `npm run build` does) into node_modules/.cache (out of ESLint's and git's
# way; node_modules is still found from there), then runs it with node.
# Needs the model: `npm run models:setup`. Flags go to embedder-bench.ts: --threads N --batch N --rounds N.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=node_modules/.cache/engram-bench/embedder-js
rm -rf "$out"
npx --no-install swc test/bench/embedder-bench.ts libs --out-dir "$out" --config-file .swcrc \
  --ignore '**/*.spec.ts' -q
exec node "$out/test/bench/embedder-bench.js" "$@"
