#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for the transactional dedup store's tests, from
# Debian's postgresql package (make setup installs it). As root the server runs as the
# `postgres` user the package creates (PostgreSQL refuses to run as root).
#
#   source scripts/postgres.sh; start_postgres   # exports ROYALTYKIT_PG_DSN, ROYALTYKIT_PG_RESTART;
#                                                # the cluster is stopped and removed on exit
#   bash scripts/postgres.sh restart DIR PORT    # what ROYALTYKIT_PG_RESTART runs (an immediate
#                                                # stop: the server dies as in a crash, then starts)

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  echo "PostgreSQL is missing (make setup installs Debian's postgresql)" >&2
  return 1
}

pg_as() {  # from / : the postgres user may not enter the caller's (private) directory
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

pg_start_server() {  # DIR PORT
  pg_as "$(pg_bin)/pg_ctl" -D "$1" -l "$1/server.log" -w -t 60 \
    -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
}

start_postgres() {
  local bin dir port
  bin=$(pg_bin)
  dir=$(mktemp -d /tmp/royaltykit-pg.XXXXXX)
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pg_as "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >/dev/null
  pg_start_server "$dir/data" "$port"
  export ROYALTYKIT_PG_DSN="postgresql://postgres@127.0.0.1:$port/postgres"
  export ROYALTYKIT_PG_RESTART="bash $ROOT/scripts/postgres.sh restart $dir/data $port"
  ROYALTYKIT_PG_DIR=$dir
  trap 'pg_as "$(pg_bin)/pg_ctl" -D "$ROYALTYKIT_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$ROYALTYKIT_PG_DIR" "$WORK"' EXIT
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    restart)
      pg_as "$(pg_bin)/pg_ctl" -D "$2" -m immediate stop >/dev/null
      pg_start_server "$2" "$3"
      ;;
    *) echo "usage: postgres.sh restart DIR PORT (or source it and call start_postgres)" >&2; exit 2 ;;
  esac
fi
