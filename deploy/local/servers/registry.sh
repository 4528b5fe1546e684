# Apicurio Registry 3.3 as the Confluent-compatible Schema Registry (API at /apis/ccompat/v7).
# Sourced by infra.sh (after lib.sh). The `all` tarball (a self-contained Quarkus app) comes from
# Maven Central into ~/.m2 via deploy/local/registry/pom.xml and is unpacked into
# $INFRA_HOME/registry/<version>. Storage: H2 in a file under $DATA_HOME/registry, so
# schemas and their ids survive a restart (Apicurio's default is in-memory H2).

REGISTRY_VERSION="${ENGRAM_REGISTRY_VERSION:-3.3.3}"
REGISTRY_DIR="$INFRA_HOME/registry/$REGISTRY_VERSION"
REGISTRY_DATA_DIR="$DATA_HOME/registry"
REGISTRY_STAMP="$REGISTRY_DIR/.unpacked"

registry_setup() {
  [ -f "$REGISTRY_STAMP" ] && return 0
  local cp_file="$INFRA_HOME/registry/tarball-$REGISTRY_VERSION.path" tarball tmp
  mkdir -p "$INFRA_HOME/registry"
  log "resolving io.apicurio:apicurio-registry-app:$REGISTRY_VERSION:tar.gz:all from Maven Central"
  # build-classpath downloads the tarball into ~/.m2 (or finds it there) and reports its path,
  # which avoids keeping a second 159 MB copy in the cache.
  "${MVN[@]}" -f "$DEPLOY_LOCAL_DIR/registry/pom.xml" dependency:build-classpath \
    -Dapicurio.version="$REGISTRY_VERSION" -Dmdep.outputFile="$cp_file"
  tarball="$(cat "$cp_file")"
  [ -f "$tarball" ] || die "registry tarball not found after resolution: $tarball"
  # Unpack beside the target and rename, so an interrupted unpack never looks complete.
  tmp="$REGISTRY_DIR.tmp.$$"
  rm -rf "$tmp" "$REGISTRY_DIR"
  mkdir -p "$tmp"
  tar -xzf "$tarball" -C "$tmp"
  mv "$tmp" "$REGISTRY_DIR"
  registry_jar >/dev/null || die "quarkus-run.jar not found in $tarball"
  touch "$REGISTRY_STAMP"
}

# registry_jar: the launcher's place moved between releases (quarkus-app/ in 3.1–3.2, root in 3.3).
registry_jar() {
  local jar
  jar="$(find "$REGISTRY_DIR" -maxdepth 2 -name quarkus-run.jar -print -quit)"
  [ -n "$jar" ] && echo "$jar"
}

registry_start() {
  local tmp="$INFRA_HOME/registry/tmp"
  # Refuse rather than have the readiness probe succeed against someone else's server.
  ! port_open "$REGISTRY_PORT" || die "port $REGISTRY_PORT is already in use by a process infra.sh did not start"
  mkdir -p "$REGISTRY_DATA_DIR" "$tmp"
  # A small connection pool: the default of 20 idle H2 connections buys nothing for tests.
  local java; java="$(java_modern 21)"
  start_daemon registry "$java" -Xmx384m -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir="$tmp" \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dapicurio.datasource.url="jdbc:h2:file:$REGISTRY_DATA_DIR/registry" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.storage.snapshot.location="$tmp" \
    -jar "$(registry_jar)"
}

registry_ready() { http_ok "$(registry_endpoint)/subjects"; }
registry_endpoint() { echo "http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7"; }
registry_timeout() { echo 120; }
