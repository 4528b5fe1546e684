#!/usr/bin/env bash
# Real Kafka (KRaft), a Confluent-compatible Schema Registry (Apicurio), Elasticsearch 8 and
# Neo4j 5 as local processes on loopback, downloaded once from Maven Central. No Docker needed.
#
#   infra.sh setup  [server…]   download/build into the cache only
#   infra.sh up     [server…]   setup, then start (one after another) and wait until ready
#   infra.sh down   [server…]   stop, leaving no process behind
#   infra.sh status [server…]   report each server (exit 1 if any is not ready)
#
# Servers: kafka registry elasticsearch neo4j. Each one is a file in servers/ defining
# NAME_setup (idempotent download/build), NAME_start (launch via start_daemon), NAME_ready
# (readiness probe), NAME_endpoint (the address clients use) and NAME_timeout (start-up budget, s).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

ALL_SERVERS=(kafka registry elasticsearch neo4j)

cmd="${1:-status}"; shift || true
servers=("$@"); [ ${#servers[@]} -gt 0 ] || servers=("${ALL_SERVERS[@]}")
for s in "${servers[@]}"; do
  [[ " ${ALL_SERVERS[*]} " == *" $s "* ]] || die "unknown server '$s' (known: ${ALL_SERVERS[*]})"
  source "$DEPLOY_LOCAL_DIR/servers/$s.sh"
done

timed() { # timed LABEL CMD...: run CMD and print how long it took
  local label="$1" start=$SECONDS; shift
  "$@"
  log "$label took $((SECONDS - start))s"
}

up_one() {
  local s="$1"
  if is_running "$s" && "${s}_ready" >/dev/null 2>&1; then
    log "$s already running ($(${s}_endpoint))"
    return 0
  fi
  is_running "$s" || rm -f "$(pid_file "$s")"
  if ! is_running "$s"; then
    timed "$s setup" "${s}_setup"
    local start=$SECONDS
    "${s}_start"
    wait_until "$(${s}_timeout)" "$s" "${s}_ready"
    log "$s ready in $((SECONDS - start))s, RSS $(rss_mb "$s") MB ($(${s}_endpoint))"
  else
    wait_until "$(${s}_timeout)" "$s" "${s}_ready"
    log "$s ready ($(${s}_endpoint))"
  fi
}

status_one() {
  local s="$1"
  if is_running "$s" && "${s}_ready" >/dev/null 2>&1; then
    printf '%-14s ready    pid %-8s RSS %5s MB  %s\n' "$s" "$(cat "$(pid_file "$s")")" "$(rss_mb "$s")" "$(${s}_endpoint)"
  elif is_running "$s"; then
    printf '%-14s starting pid %-8s %s\n' "$s" "$(cat "$(pid_file "$s")")" "$(${s}_endpoint)"; return 1
  else
    printf '%-14s stopped  %s\n' "$s" "$(${s}_endpoint)"; return 1
  fi
}

case "$cmd" in
  setup) for s in "${servers[@]}"; do timed "$s setup" "${s}_setup"; done ;;
  # Sequential on purpose: parallel JVM warm-up on two cores is slower than one after another.
  up) for s in "${servers[@]}"; do up_one "$s"; done; "$0" status "${servers[@]}" ;;
  down)
    for ((i = ${#servers[@]} - 1; i >= 0; i--)); do stop_daemon "${servers[i]}"; done
    log "stopped: ${servers[*]}" ;;
  status)
    rc=0; for s in "${servers[@]}"; do status_one "$s" || rc=1; done; exit $rc ;;
  *) die "usage: infra.sh setup|up|down|status [server…]" ;;
esac
