#!/usr/bin/env bash
# Runs the embedded event log benchmark without a TypeScript runner: compiles it and the libs it
# uses with the repo's own swc (.swcrc, as `npm run build` does) into node_modules/.cache, then
# runs it with node. Flags go to event-log-bench.ts: --dir DIR (where the database is made).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=node_modules/.cache/engram-bench/event-log-js
rm -rf "$out"
npx --no-install swc test/bench/event-log-bench.ts libs/core libs/contracts libs/embedded \
  --out-dir "$out" --config-file .swcrc --ignore '**/*.spec.ts' -q
# The compiled files resolve schemas/ from the repository, as the built services do.
exec node "$out/test/bench/event-log-bench.js" "$@"
