# Apache Kafka 3.9 in KRaft mode: one process that is both broker and controller, on loopback.
# Sourced by infra.sh (after lib.sh). The jars come from Maven Central into ~/.m2 via
# deploy/local/kafka/pom.xml; the cache ($INFRA_HOME/kafka) holds only the classpath file, the
# rendered config and the cluster id. Data lives in $DATA_HOME/kafka.

KAFKA_VERSION="${ENGRAM_KAFKA_VERSION:-3.9.1}"
KAFKA_DIR="$INFRA_HOME/kafka"
KAFKA_DATA_DIR="$DATA_HOME/kafka"
KAFKA_CP_FILE="$KAFKA_DIR/classpath-$KAFKA_VERSION" # doubles as the setup stamp
KAFKA_CONFIG="$KAFKA_DIR/server.properties"

# kafka_jars_present: every jar of the recorded classpath is still there (~/.m2 may be wiped
# independently of the cache, as on CI).
kafka_jars_present() {
  local jar
  [ -s "$KAFKA_CP_FILE" ] || return 1
  while IFS= read -r jar; do
    [ -f "$jar" ] || return 1
  done < <(tr ':' '\n' <"$KAFKA_CP_FILE")
}

kafka_setup() {
  kafka_jars_present && return 0
  mkdir -p "$KAFKA_DIR"
  log "resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION from Maven Central"
  "${MVN[@]}" -f "$DEPLOY_LOCAL_DIR/kafka/pom.xml" dependency:build-classpath \
    -Dkafka.version="$KAFKA_VERSION" -Dmdep.outputFile="$KAFKA_CP_FILE.tmp"
  mv "$KAFKA_CP_FILE.tmp" "$KAFKA_CP_FILE"
}

# JVM flags shared by the broker and StorageTool. zstd-jni and snappy unpack native libraries
# into the temp dir, which must allow exec; /tmp may be mounted noexec, the cache is not.
kafka_jvm_flags() {
  local tmp="$KAFKA_DIR/tmp"
  mkdir -p "$tmp"
  printf '%s\n' -Djava.awt.headless=true "-Djava.io.tmpdir=$tmp" "-DZstdTempFolder=$tmp" \
    "-Dorg.xerial.snappy.tempdir=$tmp" \
    "-Dlog4j.configuration=file:$DEPLOY_LOCAL_DIR/kafka/log4j.properties"
}

# kafka_render_config: server.properties for the current ports (they can change per environment).
kafka_render_config() {
  sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
    -e "s|@KAFKA_CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
    -e "s|@DATA_DIR@|$KAFKA_DATA_DIR|g" \
    "$DEPLOY_LOCAL_DIR/kafka/server.properties.template" >"$KAFKA_CONFIG"
}

# kafka_format: write meta.properties once. A random 16-byte id in base64url is a valid cluster id
# and saves a JVM start for `StorageTool random-uuid`. --ignore-formatted keeps a rerun harmless.
kafka_format() {
  [ -f "$KAFKA_DATA_DIR/meta.properties" ] && return 0
  local id_file="$KAFKA_DIR/cluster.id" flags
  [ -s "$id_file" ] || head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22 >"$id_file"
  mkdir -p "$KAFKA_DATA_DIR"
  mapfile -t flags < <(kafka_jvm_flags)
  "$JAVA" -Xmx256m "${flags[@]}" -cp "$(cat "$KAFKA_CP_FILE")" kafka.tools.StorageTool format \
    -t "$(cat "$id_file")" -c "$KAFKA_CONFIG" --ignore-formatted >>"$LOG_DIR/kafka.log" 2>&1 \
    || die "kafka storage format failed (log: $LOG_DIR/kafka.log)"
}

kafka_start() {
  local port flags
  # Refuse rather than have the readiness probe succeed against someone else's broker.
  for port in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
    ! port_open "$port" || die "port $port is already in use by a process infra.sh did not start"
  done
  kafka_render_config
  kafka_format
  mapfile -t flags < <(kafka_jvm_flags)
  start_daemon kafka "$JAVA" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExitOnOutOfMemoryError "${flags[@]}" -cp "$(cat "$KAFKA_CP_FILE")" kafka.Kafka "$KAFKA_CONFIG"
}

# kafka_ready: a real Metadata round trip (v4, all topics) over bash's /dev/tcp, with no JVM start.
# In KRaft the response lists only unfenced brokers, so a non-empty broker list means this broker
# has joined the quorum's metadata and can lead partitions, i.e. accept produce requests.
kafka_ready() {
  local out bytes
  port_open "$KAFKA_PORT" || return 1
  # size=20 | api_key=3 | api_version=4 | correlation_id=1 | client_id="probe" | topics=null | auto_create=0
  out="$(timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "\x00\x00\x00\x14\x00\x03\x00\x04\x00\x00\x00\x01\x00\x05probe\xff\xff\xff\xff\x00" >&3
    head -c 16 <&3 | od -An -tu1 -v' _ "$KAFKA_PORT")" || return 1
  # Response: size(4) correlation_id(4) throttle_time_ms(4) brokers.length(4)
  read -r -a bytes <<<"$out"
  [ "${#bytes[@]}" -eq 16 ] || return 1
  [ $(((bytes[12] << 24) | (bytes[13] << 16) | (bytes[14] << 8) | bytes[15])) -ge 1 ]
}

kafka_endpoint() { echo "127.0.0.1:$KAFKA_PORT"; }
# The broker loads every partition's log before it answers: with the thousands of per-test topics
# a developer machine accumulates, that alone took ~90 s here (13k partition directories).
kafka_timeout() { echo 300; }
