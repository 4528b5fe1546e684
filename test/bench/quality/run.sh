#!/usr/bin/env bash
# `npm run bench:quality`: compiles the benchmarks, libs/ and apps/ with the repo's own swc
# (.swcrc, as `npm run build` does) into .cache/bench/quality-js and runs quality.ts with node.
# Flags go to quality.ts: --only A,B  --quick  --json  --datasets DIR. Needs ../shared/datasets
# and, for the embedding-based methods, the model (`npm run models:setup`).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=.cache/bench/quality-js
rm -rf "$out"
npx --no-install swc test/bench libs apps --out-dir "$out" --config-file .swcrc \
  --ignore '**/*.spec.ts' -q
exec node "$out/test/bench/quality/quality.js" "$@"
