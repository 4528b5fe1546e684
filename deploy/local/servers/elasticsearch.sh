# Elasticsearch 8 single-node server, HTTP on 127.0.0.1:$ES_PORT (sourced by infra.sh).
#
# Maven Central has the server jar and the transport-netty4 plugin, but not ES's other modules
# (analysis-common, rest-root, lang-painless, reindex, mapper-extras…) nor X-Pack as a runnable
# set. deploy/local/elasticsearch/ holds a small launcher (src/org/elasticsearch/node/
# EngramEsLauncher.java) that builds a real Node with the Netty4 plugin plus EngramCompatPlugin
# (GET /, the `english` analyzer, porter_stem/kstem/english_possessive/asciifolding filters).
# Data is durable under $DATA_HOME/elasticsearch; built artefacts live under
# $INFRA_HOME/elasticsearch.

ES_SRC_DIR="$DEPLOY_LOCAL_DIR/elasticsearch"
ES_DIR="$INFRA_HOME/elasticsearch"
ES_HOME_DIR="$ES_DIR/home"                # path.home; config/ is refreshed from $ES_SRC_DIR at start
ES_CP_FILE="$ES_DIR/classpath.txt"
ES_CLASSES="$ES_DIR/classes"
ES_ARGFILE="$ES_DIR/classpath.args"       # java @argfile, keeps the 50-jar -cp out of the log
ES_STAMP="$ES_DIR/setup.stamp"
ES_MAIN=org.elasticsearch.node.EngramEsLauncher

# _es_key: changes whenever the pinned version or the launcher sources change (elasticsearch.yml
# and log4j2.properties are copied at start, so they need no rebuild).
_es_key() {
  { cat "$ES_SRC_DIR/pom.xml"; find "$ES_SRC_DIR/src" -name '*.java' | LC_ALL=C sort | xargs cat; } \
    | sha256sum | cut -c1-16
}

# _es_built: the outputs of elasticsearch_setup exist, and so do the jars they point at (~/.m2
# may be wiped independently of $INFRA_HOME).
_es_built() {
  local jar
  [ -s "$ES_CP_FILE" ] && [ -s "$ES_ARGFILE" ] && [ -f "$ES_CLASSES/org/elasticsearch/node/EngramEsLauncher.class" ] || return 1
  while IFS= read -r jar; do [ -f "$jar" ] || return 1; done < <(tr ':' '\n' <"$ES_CP_FILE")
}

elasticsearch_setup() {
  local key; key="$(_es_key)"
  if [ "$(cat "$ES_STAMP" 2>/dev/null)" = "$key" ] && _es_built; then
    return 0
  fi
  mkdir -p "$ES_DIR"
  log "elasticsearch: resolving jars from Maven Central (first run downloads about 41 MB of jars into ~/.m2)"
  # build-classpath only reads the pom (packaging pom: nothing is built, no target/ in the clone).
  local out
  if ! out="$("${MVN[@]}" -f "$ES_SRC_DIR/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$ES_CP_FILE.tmp" 2>&1)"; then
    printf '%s\n' "$out" >&2
    die "elasticsearch: Maven could not resolve the classpath"
  fi
  mv "$ES_CP_FILE.tmp" "$ES_CP_FILE"
  rm -rf "$ES_CLASSES"; mkdir -p "$ES_CLASSES"
  # The launcher uses package-private ES internals that change between minors; the ES version is
  # pinned in pom.xml, and a version bump may need launcher changes.
  local sources; mapfile -t sources < <(find "$ES_SRC_DIR/src" -name '*.java' | LC_ALL=C sort)
  "$JAVAC" --release 17 -nowarn -cp "$(cat "$ES_CP_FILE")" -d "$ES_CLASSES" "${sources[@]}" \
    || die "elasticsearch: could not compile the launcher"
  printf -- '-cp "%s:%s"\n' "$ES_CLASSES" "$(cat "$ES_CP_FILE")" >"$ES_ARGFILE"
  echo "$key" >"$ES_STAMP"
}

elasticsearch_start() {
  mkdir -p "$ES_HOME_DIR/config" "$ES_DIR/logs" "$ES_DIR/tmp" "$DATA_HOME/elasticsearch"
  cp "$ES_SRC_DIR/elasticsearch.yml" "$ES_SRC_DIR/log4j2.properties" "$ES_HOME_DIR/config/"
  # JVM flags: a small fixed heap and bounded direct memory (the other servers share 2 cores and
  # the RAM), plus the log4j/netty flags of ES's own jvm.options that matter here.
  start_daemon elasticsearch "$JAVA" -Xms512m -Xmx512m -XX:MaxDirectMemorySize=256m -XX:+UseG1GC \
    -XX:-OmitStackTraceInFastThrow -XX:+ExitOnOutOfMemoryError --enable-native-access=ALL-UNNAMED \
    -Dfile.encoding=UTF-8 -Djava.io.tmpdir="$ES_DIR/tmp" -Djava.locale.providers=SPI,CLDR \
    -Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true -Dlog4j2.formatMsgNoLookups=true \
    -Dio.netty.noUnsafe=true -Dio.netty.noKeySetOptimization=true -Dio.netty.recycler.maxCapacityPerThread=0 \
    "@$ES_ARGFILE" "$ES_MAIN" "$ES_HOME_DIR" \
    "network.host=127.0.0.1" \
    "http.port=$ES_PORT" \
    "transport.port=$ES_TRANSPORT_PORT" \
    "path.data=$DATA_HOME/elasticsearch" \
    "path.logs=$ES_DIR/logs"
}

# elasticsearch_ready: the cluster is at least yellow (the node is up, the HTTP layer answers and
# the cluster state is recovered), and responses carry the header the JS client insists on.
elasticsearch_ready() {
  curl -fsS --max-time 5 -D - -o /dev/null \
    "http://127.0.0.1:$ES_PORT/_cluster/health?wait_for_status=yellow&timeout=2s" \
    | grep -qi '^x-elastic-product: *Elasticsearch'
}

elasticsearch_endpoint() { echo "http://127.0.0.1:$ES_PORT"; }

elasticsearch_timeout() { echo 120; }
