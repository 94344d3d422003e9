#!/usr/bin/env bash
# Makes sure a MariaDB/MySQL server answers at the configured address: uses a running one,
# starts an installed local MariaDB, or installs Debian's mariadb-server; otherwise fails
# with a message that says what to do.
set -euo pipefail

url="${TEST_DATABASE_URL:-${DATABASE_URL:-mysql://root@127.0.0.1:3306/test}}"
read -r host port user password < <(node -e '
  const u = new URL(process.argv[1]);
  console.log([u.hostname || "127.0.0.1", u.port || 3306, decodeURIComponent(u.username || "root"), decodeURIComponent(u.password) || "-"].join(" "));
' "$url")
[ "$password" = "-" ] && password=""

log() { printf 'db: %s\n' "$*" >&2; }

reachable() {
  node -e '
    const [host, port, user, password] = process.argv.slice(1);
    require("mysql2/promise").createConnection({ host, port: Number(port), user, password, connectTimeout: 2000 })
      .then((c) => c.end()).then(() => process.exit(0), (e) => { console.error(e.code || e.message); process.exit(1); });
  ' "$host" "$port" "$user" "$password" 2>/dev/null
}

wait_until_reachable() {
  for _ in $(seq 1 60); do
    reachable && return 0
    sleep 1
  done
  return 1
}

if reachable; then
  exit 0
fi

case "$host" in
  127.0.0.1|localhost|::1) ;;
  *) log "cannot reach the database at $host:$port as $user; start it or fix DATABASE_URL/TEST_DATABASE_URL"; exit 1 ;;
esac

installed_now=0
if [ ! -x /usr/sbin/mariadbd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "MariaDB is not installed; installing Debian's mariadb-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq mariadb-server >/dev/null
    installed_now=1
  else
    log "no database at $host:$port and MariaDB is not installed; install mariadb-server (as root: apt-get install mariadb-server) or set DATABASE_URL to a running MySQL/MariaDB"
    exit 1
  fi
fi

log "starting MariaDB"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
if [ ! -d /var/lib/mysql/mysql ]; then
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
fi
start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql >/dev/null
if ! wait_until_reachable; then
  # A fresh Debian install lets root in only through the unix socket: allow the empty
  # password over TCP for this local development server, as the project's default URL expects.
  if [ "$user" = root ] && [ -z "$password" ] && command -v mariadb >/dev/null; then
    log "allowing root with an empty password on 127.0.0.1 (local development server)"
    mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');" 2>/dev/null || true
    mariadb -uroot -e "CREATE DATABASE IF NOT EXISTS test;" 2>/dev/null || true
  fi
  wait_until_reachable || { log "MariaDB did not become reachable at $host:$port as $user"; exit 1; }
fi
[ "$installed_now" = 1 ] && log "MariaDB installed and running"
log "MariaDB is running at $host:$port"
