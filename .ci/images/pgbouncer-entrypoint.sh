#!/bin/sh
# The entrypoint of .ci/labimages' pgbouncer stand-in (Debian's PgBouncer),
# reading the variables compose.yaml gives the pinned image: DATABASE_URL
# (postgres://user:password@host:port/db), AUTH_TYPE, POOL_MODE,
# DEFAULT_POOL_SIZE, MAX_CLIENT_CONN, STATS_USERS (who may read the admin
# console's SHOW commands: the exporter). It listens on 5432, runs as postgres.
set -eu
ini=/etc/pgbouncer/pgbouncer.ini
if [ "$(id -u)" = 0 ]; then
  rest=${DATABASE_URL#*://}
  creds=${rest%%@*}
  hostpart=${rest#*@}
  hostport=${hostpart%%/*}
  user=${creds%%:*}
  password=${creds#*:}
  host=${hostport%%:*}
  port=${hostport#*:}
  [ "$port" = "$hostport" ] && port=5432
  printf '"%s" "%s"\n' "$user" "$password" >/etc/pgbouncer/userlist.txt
  cat >"$ini" <<INI
[databases]
* = host=$host port=$port

[pgbouncer]
listen_addr = 0.0.0.0
listen_port = 5432
unix_socket_dir =
auth_type = ${AUTH_TYPE:-md5}
auth_file = /etc/pgbouncer/userlist.txt
pool_mode = ${POOL_MODE:-session}
default_pool_size = ${DEFAULT_POOL_SIZE:-20}
max_client_conn = ${MAX_CLIENT_CONN:-100}
ignore_startup_parameters = extra_float_digits
${STATS_USERS:+stats_users = $STATS_USERS}
INI
  chown postgres:postgres "$ini" /etc/pgbouncer/userlist.txt
  chmod 600 /etc/pgbouncer/userlist.txt
  exec /usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
exec "$@"
