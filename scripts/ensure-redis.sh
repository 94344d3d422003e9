#!/usr/bin/env bash
# Makes sure a Redis answers at TEST_REDIS_URL (default redis://127.0.0.1:6379) for the e2e
# suite that shares rate limits between two API processes: uses a running one, starts an
# installed redis-server, or installs Debian's redis-server; otherwise fails with a message.
set -euo pipefail

url="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
hostport="${url#redis://}"; hostport="${hostport#*@}"; hostport="${hostport%%/*}"
host="${hostport%%:*}"; port="${hostport##*:}"; [ "$port" = "$host" ] && port=6379

log() { printf 'redis: %s\n' "$*" >&2; }

pong() {
  { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || return 1
  printf 'PING\r\n' >&3
  local reply=""
  IFS= read -r -t 2 reply <&3 || true
  exec 3>&- 3<&-
  [[ "$reply" == +PONG* ]]
}

pong && exit 0

case "$host" in
  127.0.0.1|localhost) ;;
  *) log "cannot reach Redis at $host:$port; start it or set TEST_REDIS_URL"; exit 1 ;;
esac

if ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "Redis is not installed; installing Debian's redis-server"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    log "no Redis at $host:$port and redis-server is not installed; install it (apt-get install redis-server) or set TEST_REDIS_URL"
    exit 1
  fi
fi

log "starting redis-server on $host:$port (no persistence)"
redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no >/dev/null
for _ in $(seq 1 30); do
  pong && { log "Redis is running at $host:$port"; exit 0; }
  sleep 0.5
done
log "Redis did not answer at $host:$port"
exit 1
