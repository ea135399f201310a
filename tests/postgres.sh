# A real PostgreSQL for a test, in a temporary directory (sourced): start_postgres starts one
# (initdb, pg_ctl; as the postgres user when run as root, since PostgreSQL refuses root), sets
# POSTGRES_URL to its database "postgres" and stops it when the test exits. Exits 0 with a
# SKIPPED: line where PostgreSQL's server is not installed. PG_NETNS, when set, names the
# network namespace it runs in, and PG_LISTEN the address it listens on (127.0.0.1).

postgres_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

start_postgres() {
  local bin port
  bin=$(postgres_bin)
  if [[ -z $bin || ! -x $bin/initdb || ! -x $bin/pg_ctl ]]; then
    echo "SKIPPED: PostgreSQL's server is not installed (scripts/setup.sh installs postgresql)"
    exit 0
  fi
  PG_DIR=$(mktemp -d /tmp/fabricctl-pg.XXXXXX)
  chmod 755 "$PG_DIR"
  local as=() listen=${PG_LISTEN:-127.0.0.1}
  [[ -n ${PG_NETNS:-} ]] && as=(ip netns exec "$PG_NETNS")
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { echo "SKIPPED: running as root, and there is no postgres user to run PostgreSQL as"; exit 0; }
    chown postgres "$PG_DIR"
    as+=(runuser -u postgres --)
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # From a directory the postgres user may enter.
  cd "$PG_DIR" || exit 1
  "${as[@]}" "$bin/initdb" -D "$PG_DIR/data" -U fabric --auth=trust -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
    { echo "FAIL: initdb"; cat "$PG_DIR/initdb.log"; exit 1; }
  # Clients on the server's own subnets too (a test's network namespaces), as on loopback.
  echo "host all all samenet trust" >>"$PG_DIR/data/pg_hba.conf"
  # fsync off: a test's database need not survive a power cut.
  "${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
    -o "-p $port -k $PG_DIR -c listen_addresses=$listen -c fsync=off" start >/dev/null ||
    { echo "FAIL: pg_ctl start"; cat "$PG_DIR/server.log"; exit 1; }
  POSTGRES_STOP=("${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -m immediate stop)
  cd - >/dev/null || exit 1
  trap 'stop_postgres' EXIT
  PG_PORT=$port
  PG_PSQL=("${as[@]}" "$bin/psql" -h "$PG_DIR" -p "$port" -U fabric -d postgres -v ON_ERROR_STOP=1 -qAt)
  export POSTGRES_URL="postgresql://fabric@$listen:$port/postgres"
}

stop_postgres() {
  (cd "$PG_DIR" && "${POSTGRES_STOP[@]}" >/dev/null 2>&1) || true
  rm -rf "$PG_DIR"
}
