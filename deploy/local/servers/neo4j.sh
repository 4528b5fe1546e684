# Neo4j 5.26 LTS community server with Bolt, HTTP and the Browser (sourced by infra.sh).
#
# Jars come from Maven Central through deploy/local/neo4j/pom.xml; a small launcher
# (neo4j/Neo4jLauncher.java) runs the real CommunityBootstrapper in-process, so data is durable
# under $DATA_HOME/neo4j. Built artefacts live under $INFRA_HOME/neo4j.

NEO4J_SRC_DIR="$DEPLOY_LOCAL_DIR/neo4j"
NEO4J_DIR="$INFRA_HOME/neo4j"
NEO4J_CP_FILE="$NEO4J_DIR/classpath.txt"
NEO4J_CLASSES="$NEO4J_DIR/classes"
NEO4J_ARGFILE="$NEO4J_DIR/classpath.args"  # java @argfile, keeps the 200-jar -cp out of the log
NEO4J_STAMP="$NEO4J_DIR/setup.stamp"

# _neo4j_key: changes whenever the pinned versions or the launcher change (neo4j.conf is read at
# start, so it needs no rebuild).
_neo4j_key() {
  cat "$NEO4J_SRC_DIR/pom.xml" "$NEO4J_SRC_DIR/Neo4jLauncher.java" | sha256sum | cut -c1-16
}

# _neo4j_built: the outputs of neo4j_setup exist, and so do the jars they point at (~/.m2 may be
# wiped independently of $INFRA_HOME, e.g. on a fresh CI machine).
_neo4j_built() {
  local jar
  [ -s "$NEO4J_CP_FILE" ] && [ -s "$NEO4J_ARGFILE" ] && [ -f "$NEO4J_CLASSES/Neo4jLauncher.class" ] || return 1
  while IFS= read -r jar; do [ -f "$jar" ] || return 1; done < <(tr ':' '\n' <"$NEO4J_CP_FILE")
}

neo4j_setup() {
  local key; key="$(_neo4j_key)"
  if [ "$(cat "$NEO4J_STAMP" 2>/dev/null)" = "$key" ] && _neo4j_built; then
    return 0
  fi
  mkdir -p "$NEO4J_DIR"
  # Neo4j 5.26 supports Java 17 and 21 only; a newer JDK via ENGRAM_JAVA_HOME fails at start-up.
  local jver; jver="$("$JAVA" -version 2>&1)" || true
  [[ "$jver" =~ version\ \"(17|21)[.\"] ]] || log "neo4j: warning: 5.26 needs Java 17 or 21, not: ${jver%%$'\n'*}"
  log "neo4j: resolving jars from Maven Central (first run downloads about 140 MB of jars into ~/.m2, about 1 min)"
  # build-classpath only reads the pom (packaging pom: nothing is built, no target/ in the clone).
  # Maven's output is shown only on failure: even with -q it prints stray colour escapes.
  local out
  if ! out="$("${MVN[@]}" -f "$NEO4J_SRC_DIR/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$NEO4J_CP_FILE.tmp" 2>&1)"; then
    printf '%s\n' "$out" >&2
    die "neo4j: Maven could not resolve the classpath"
  fi
  mv "$NEO4J_CP_FILE.tmp" "$NEO4J_CP_FILE"
  rm -rf "$NEO4J_CLASSES"; mkdir -p "$NEO4J_CLASSES"
  "$JAVAC" --release 17 -nowarn -cp "$(cat "$NEO4J_CP_FILE")" -d "$NEO4J_CLASSES" \
    "$NEO4J_SRC_DIR/Neo4jLauncher.java" || die "neo4j: could not compile the launcher"
  printf -- '-cp "%s:%s"\n' "$NEO4J_CLASSES" "$(cat "$NEO4J_CP_FILE")" >"$NEO4J_ARGFILE"
  echo "$key" >"$NEO4J_STAMP"
}

neo4j_start() {
  mkdir -p "$NEO4J_DIR/home" "$NEO4J_DIR/logs" "$DATA_HOME/neo4j"
  # JVM flags: small heap; the --add-opens/netty flags are the ones Neo4j's own neo4j.conf adds
  # for Java 17 (direct buffers, native transport).
  start_daemon neo4j "$JAVA" -Xms128m -Xmx512m -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow \
    -Dfile.encoding=UTF-8 -Dlog4j2.disable.jmx=true -Dio.netty.tryReflectionSetAccessible=true \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    "@$NEO4J_ARGFILE" Neo4jLauncher \
    "$NEO4J_DIR/home" "$NEO4J_SRC_DIR/neo4j.conf" \
    "server.bolt.listen_address=127.0.0.1:$NEO4J_BOLT_PORT" \
    "server.bolt.advertised_address=127.0.0.1:$NEO4J_BOLT_PORT" \
    "server.http.listen_address=127.0.0.1:$NEO4J_HTTP_PORT" \
    "server.http.advertised_address=127.0.0.1:$NEO4J_HTTP_PORT" \
    "server.directories.data=$DATA_HOME/neo4j" \
    "server.directories.logs=$NEO4J_DIR/logs" \
    "server.directories.run=$NEO4J_DIR/home/run"
}

# _neo4j_bolt_handshake: the Bolt listener answers a version handshake (magic 0x6060B017, then
# four proposals: 5.0–5.8 and 4.4). A non-zero reply means Bolt accepts sessions.
_neo4j_bolt_handshake() {
  local reply
  reply="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf "\x60\x60\xb0\x17\x00\x08\x08\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00" >&3
    head -c 4 <&3 | od -An -tx1' _ "$NEO4J_BOLT_PORT" 2>/dev/null | tr -d ' \n')" || true
  [ -n "$reply" ] && [ "$reply" != "00000000" ]
}

# _neo4j_cypher_ok: a Cypher query through the HTTP API runs without errors (the database is
# online, not just the sockets).
_neo4j_cypher_ok() {
  curl -fsS --max-time 5 -H 'Content-Type: application/json' \
    -d '{"statements":[{"statement":"RETURN 1"}]}' \
    "http://127.0.0.1:$NEO4J_HTTP_PORT/db/neo4j/tx/commit" | grep -q '"errors":\[\]'
}

neo4j_ready() { _neo4j_bolt_handshake && _neo4j_cypher_ok; }

neo4j_endpoint() {
  echo "bolt://127.0.0.1:$NEO4J_BOLT_PORT, browser http://127.0.0.1:$NEO4J_HTTP_PORT/browser/"
}

neo4j_timeout() { echo 120; }
