#!/usr/bin/env bash
# Runs the segmentation benchmark without a TypeScript runner: compiles the benchmark and libs/
# with the repo's own swc (.swcrc, as `npm run build` does) into .cache/bench/js, then runs it
# with node. Flags go to run.ts: --seed N --sessions N --regenerate --json --command "CMD ARGS".
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=.cache/bench/js
rm -rf "$out"
npx --no-install swc test/bench/segmentation libs --out-dir "$out" --config-file .swcrc \
  --ignore '**/*.spec.ts' -q
exec node "$out/test/bench/segmentation/run.js" "$@"
