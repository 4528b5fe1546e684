#!/usr/bin/env bash
# Runs the retrieval-quality benchmark (bench.ts; README.md beside it) without a TypeScript runner:
# compiles it, libs/ and apps/retrieval with the repo's own swc (.swcrc) into node_modules/.cache,
# then runs it with node. Needs the model (`npm run models:setup`); no servers. Flags go to
# bench.ts: --phase P --rrf-k N --min-knn X --cosine-mix X. `--list [REGEX]` lists the corpus.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=node_modules/.cache/engram-bench/retrieval-quality
rm -rf "$out"
npx --no-install swc test/bench/retrieval-quality libs apps/retrieval/src --out-dir "$out" \
  --config-file .swcrc --ignore '**/*.spec.ts' -q
if [ "${1:-}" = "--list" ]; then
  exec node "$out/test/bench/retrieval-quality/corpus.js" --grep "${2:-.}"
fi
exec node "$out/test/bench/retrieval-quality/bench.js" "$@"
