#!/bin/sh
# with-postgres.sh COMMAND [ARG…]: runs COMMAND against a throwaway
# PostgreSQL server, then stops the server and removes it, however COMMAND
# ends.
#
# The cluster lives in a new temporary directory: initdb'd there (as the
# `postgres` system user when run as root, since the server refuses to run
# as root), listening on a Unix socket in that directory and on 127.0.0.1
# at a free port. COMMAND sees:
#   QSTORE_TEST_POSTGRES       conninfo over the Unix socket, superuser
#   QSTORE_TEST_POSTGRES_TCP   the same over TCP
#   QSTORE_TEST_POSTGRES_PASSWORD_USER / _PASSWORD
#                              a role that must log in with a password
#                              over TCP (scram-sha-256)
#   QSTORE_TEST_POSTGRES_CTL   a script: `stop` stops the server at once
#                              (pg_ctl stop -m immediate, a crash), `start`
#                              starts it again on the same port
#   PGHOST PGPORT PGUSER PGDATABASE, for psql
# QSTORE_TEST_POSTGRES_LISTEN (default 127.0.0.1) sets the addresses the
# server listens on, QSTORE_TEST_POSTGRES_TRUST_NET a network (CIDR) whose
# clients may log in as postgres without a password.
#
# Without a PostgreSQL server on the machine, says so as a skipped TAP test
# (install it with build-aux/install-deps.sh).
set -eu

find_bindir () {
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  dir=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
  if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
    echo "$dir"
    return 0
  fi
  return 1
}

if ! bindir=$(find_bindir); then
  echo "1..0 # SKIP no PostgreSQL server here (initdb, pg_ctl): run build-aux/install-deps.sh"
  exit 0
fi

# The server runs as this user, or as `postgres` when this is root.
as_server () {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port () {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/qstore-pg.XXXXXX")
cleanup () {
  status=$?
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir"
fi
chmod 700 "$dir"

as_server "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
  --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }

# Trust over the socket and for the superuser; a password for the rest.
cat >"$dir/data/pg_hba.conf" <<EOF
local all all trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
EOF
if [ -n "${QSTORE_TEST_POSTGRES_TRUST_NET:-}" ]; then
  echo "host all postgres $QSTORE_TEST_POSTGRES_TRUST_NET trust" >>"$dir/data/pg_hba.conf"
fi

port=$(free_port)
cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = '${QSTORE_TEST_POSTGRES_LISTEN:-127.0.0.1}'
port = $port
unix_socket_directories = '$dir'
shared_buffers = 16MB
max_connections = 200
fsync = off
full_page_writes = off
logging_collector = off
EOF

cat >"$dir/ctl" <<EOF
#!/bin/sh
# stop: a crash (immediate shutdown); start: up again.
set -e
case "\$1" in
  stop) $( [ "$(id -u)" = 0 ] && echo "runuser -u postgres --" ) "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null ;;
  start) $( [ "$(id -u)" = 0 ] && echo "runuser -u postgres --" ) "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ;;
  *) echo "usage: \$0 stop|start" >&2; exit 2 ;;
esac
EOF
chmod 755 "$dir/ctl"

if ! as_server "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
  # Someone took the port meanwhile: one more try on another.
  port=$(free_port)
  echo "port = $port" >>"$dir/data/postgresql.conf"
  as_server "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    { cat "$dir/server.log" >&2; exit 1; }
fi

password="right-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
"$bindir/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
  -c "CREATE ROLE qstore_pw LOGIN PASSWORD '$password'" \
  -c "GRANT CREATE ON DATABASE postgres TO qstore_pw" >/dev/null

export QSTORE_TEST_POSTGRES="host=$dir port=$port user=postgres dbname=postgres"
export QSTORE_TEST_POSTGRES_TCP="host=127.0.0.1 port=$port user=postgres dbname=postgres"
export QSTORE_TEST_POSTGRES_PASSWORD_USER=qstore_pw
export QSTORE_TEST_POSTGRES_PASSWORD="$password"
export QSTORE_TEST_POSTGRES_CTL="$dir/ctl"
export PGHOST="$dir" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
export PATH="$bindir:$PATH"

# Not exec: the trap must outlive COMMAND.
status=0
"$@" || status=$?
exit $status
