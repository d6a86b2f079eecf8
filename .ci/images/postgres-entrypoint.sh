#!/bin/sh
# The entrypoint of .ci/labimages' postgres stand-in (Debian's PostgreSQL),
# doing what the official image's does for compose.yaml: on an empty PGDATA,
# initdb with POSTGRES_USER and POSTGRES_PASSWORD (scram-sha-256 over TCP,
# trust on the local socket), POSTGRES_DB created, listening on every
# address; `postgres -c ...` arguments passed on; run as user postgres.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
export PGDATA
case ${1:-} in -*) set -- postgres "$@" ;; esac
if [ "${1:-}" != postgres ]; then
  exec "$@"
fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec /usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pw"
  printf '\nhost all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\" OWNER \"$user\"" | postgres --single -D "$PGDATA" -c listen_addresses= postgres >/dev/null
  fi
  echo "PostgreSQL init process complete; ready for start up."
fi
exec "$@"
