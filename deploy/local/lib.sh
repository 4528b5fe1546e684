# Shared helpers for deploy/local/infra.sh and the server scripts in servers/.
# Sourced, never run. Everything downloaded, built, logged or stored lives under $INFRA_HOME,
# outside the clone, so fresh clones (CI) and worktrees reuse one download.

INFRA_HOME="${ENGRAM_INFRA_HOME:-$HOME/.cache/engram/infra}"
DEPLOY_LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_DIR="$INFRA_HOME/run"      # pid files
LOG_DIR="$INFRA_HOME/logs"     # one log per server
# Server data. CI points it at a fresh directory per run: a data dir shared by every run grows a
# topic per test forever (tens of thousands of partitions slow Kafka's start and coordinators).
DATA_HOME="${ENGRAM_INFRA_DATA:-$INFRA_HOME/data}"
mkdir -p "$INFRA_HOME" "$RUN_DIR" "$LOG_DIR" "$DATA_HOME"

# Ports (SPEC/issue defaults), each overridable by environment.
KAFKA_PORT="${ENGRAM_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${ENGRAM_KAFKA_CONTROLLER_PORT:-9093}"
REGISTRY_PORT="${ENGRAM_REGISTRY_PORT:-8081}"
ES_PORT="${ENGRAM_ES_PORT:-9200}"
ES_TRANSPORT_PORT="${ENGRAM_ES_TRANSPORT_PORT:-9300}"
NEO4J_BOLT_PORT="${ENGRAM_NEO4J_BOLT_PORT:-7687}"
NEO4J_HTTP_PORT="${ENGRAM_NEO4J_HTTP_PORT:-7474}"

# Java 17 for Kafka 3.9, ES 8.18 and Neo4j 5.26. Apicurio 3.3 is compiled for Java 21 (class file
# 65), so the registry runs on the newest JDK found (JAVA_MODERN, see java_modern below).
JAVA_HOME="${ENGRAM_JAVA_HOME:-${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}}"
JAVA="$JAVA_HOME/bin/java"
JAVAC="$JAVA_HOME/bin/javac"

# java_major JAVA_BIN: the feature release of that java (17, 21, 25…).
java_major() {
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'
}

# java_modern MIN: a java binary of at least release MIN: $ENGRAM_JAVA_MODERN_HOME, $JAVA, or the
# newest JDK under /usr/lib/jvm (Debian's default is 17; the machine image adds Temurin 25).
java_modern() {
  local min="$1" candidate best="" best_major=0 major
  for candidate in ${ENGRAM_JAVA_MODERN_HOME:+"$ENGRAM_JAVA_MODERN_HOME/bin/java"} "$JAVA" /usr/lib/jvm/*/bin/java; do
    [ -x "$candidate" ] || continue
    major="$(java_major "$candidate")"
    [ -n "$major" ] && [ "$major" -gt "$best_major" ] && { best="$candidate"; best_major="$major"; }
  done
  [ "$best_major" -ge "$min" ] || die "need a Java $min+ runtime (found at most Java $best_major); install one under /usr/lib/jvm or set ENGRAM_JAVA_MODERN_HOME"
  echo "$best"
}
MVN=(mvn -q -B)

log() { printf '[infra] %s\n' "$*" >&2; }
die() { printf '[infra] error: %s\n' "$*" >&2; exit 1; }

pid_file() { echo "$RUN_DIR/$1.pid"; }

# is_running NAME: the server's recorded process is alive.
is_running() {
  local f; f="$(pid_file "$1")"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# start_daemon NAME CMD...: start CMD detached (own session, so down can kill the whole group),
# record its pid, append its output to $LOG_DIR/NAME.log.
start_daemon() {
  local name="$1"; shift
  local log="$LOG_DIR/$name.log"
  echo "=== start $(date -u +%FT%TZ): $*" >>"$log"
  setsid nohup "$@" >>"$log" 2>&1 < /dev/null &
  echo $! >"$(pid_file "$name")"
}

# stop_daemon NAME: TERM the process group, wait up to 30 s, then KILL. Leaves nothing behind.
stop_daemon() {
  local name="$1" f pid
  f="$(pid_file "$name")"
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop in 30 s; killing"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$f"
}

# wait_until SECONDS NAME CHECK...: poll CHECK until it succeeds; fail (with the log tail) if the
# server dies or the time runs out.
wait_until() {
  local timeout="$1" name="$2"; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ! is_running "$name"; then
      tail -n 40 "$LOG_DIR/$name.log" >&2 || true
      die "$name exited during start-up (log: $LOG_DIR/$name.log)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$LOG_DIR/$name.log" >&2 || true
      die "$name not ready after ${timeout}s (log: $LOG_DIR/$name.log)"
    fi
    sleep 0.5
  done
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
http_ok() { curl -fsS -o /dev/null --max-time 3 "$1"; }

# rss_mb NAME: resident memory of the server's process tree, in MB.
rss_mb() {
  local f; f="$(pid_file "$1")"
  [ -f "$f" ] || { echo 0; return; }
  ps -o rss= --ppid "$(cat "$f")" -p "$(cat "$f")" 2>/dev/null | awk '{s+=$1} END {printf "%d", s/1024}'
}
