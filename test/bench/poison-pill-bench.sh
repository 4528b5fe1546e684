#!/usr/bin/env bash
# Runs the poison-pill benchmark (poison-pill-bench.ts) without a TypeScript runner: compiles it
# and libs/core with the repo's own swc (.swcrc) into node_modules/.cache, then runs it with node.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=node_modules/.cache/engram-bench/poison-pill-js
rm -rf "$out"
# (libs/errors when present: core's errors may live there.)
npx --no-install swc test/bench/poison-pill-bench.ts libs/core libs/contracts \
  $([ -d libs/errors ] && echo libs/errors) --out-dir "$out" --config-file .swcrc --ignore '**/*.spec.ts' -q
exec node "$out/test/bench/poison-pill-bench.js" "$@"
