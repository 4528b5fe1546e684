#!/usr/bin/env bash
# Runs the co-access usefulness evaluation (observe-usefulness.ts) without a TypeScript runner:
# compiles it and libs/ with the repo's own swc (.swcrc) into node_modules/.cache, then runs it
# with node. Flags go to observe-usefulness.ts: --repo DIR --max-commits N
# --max-files-per-commit N --json. No servers needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=node_modules/.cache/engram-bench/observe-usefulness
rm -rf "$out"
npx --no-install swc test/bench/observe-usefulness.ts libs --out-dir "$out" --config-file .swcrc \
  --ignore '**/*.spec.ts' -q
exec node "$out/test/bench/observe-usefulness.js" "$@"
