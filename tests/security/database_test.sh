#!/usr/bin/env bash
# The controller's database as a hostile or careless site would have it, on a real PostgreSQL:
# - any login holding every advisory key it sees (and those around the old fixed keys), or
#   trying to write the lease, keeps no controller from starting, taking over or restarting
#   (the lease is a row only the controller's role may write; migrations lock a table it owns);
# - tables another login made before the first start are refused, naming each and its owner;
# - a lease table someone else made first is refused, never used;
# - a read-only server (a hot standby behind a multi-host URL) is never taken for the primary;
# - a password never goes on the command line: a --db URL with one is refused, and
#   --db-password-file serves.
set -uo pipefail
source tests/testlib.sh
source tests/postgres.sh
start_postgres

BIN=$PWD
WORK=$(mktemp -d /tmp/fabricctl-dbsec.XXXXXX)
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill -9 "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  stop_postgres
  rm -rf "$WORK"
}
trap cleanup EXIT
psql_as() { (cd "$PG_DIR" && "${PG_PSQL[@]}" "$@"); }  # from a directory postgres may enter
url_of() { echo "postgresql://$1@127.0.0.1:$PG_PORT/$2"; }  # ROLE DATABASE
controller() {  # NAME ARGS...: in the background, its log in $WORK/NAME.log
  local name=$1; shift
  "$BIN/controller/fabric-controller" --listen 127.0.0.1:0 "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  echo $! > "$WORK/$name.pid"
}
wait_for() {  # SECONDS COMMAND...
  local until=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS < until)) || return 1; sleep 0.2; done
}
serving() { grep -q "listening on" "$WORK/$1.log"; }
said() { grep -q "$2" "$WORK/$1.log"; }

psql_as -c "CREATE ROLE intruder LOGIN"
# The old attacks: a role with no rights holds the fixed advisory-lock keys (the leadership's
# 7400000, the migrations' 7400001) and every key around them, for as long as it likes.
psql_as -U intruder -c "SELECT count(pg_advisory_lock(k)) FROM generate_series(7399000, 7401000) k" \
  -c "SELECT pg_sleep(600)" >/dev/null 2>&1 &
PIDS+=($!)
held() { [[ $(psql_as -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") -ge 2001 ]]; }
check "a login holds 2,001 advisory keys" wait_for 20 held
controller a --db "$POSTGRES_URL"
check "a controller starts and serves within 30 s while a login holds every key" wait_for 30 serving a
# A standby takes over from it, and a restarted controller serves again, each within 30 s.
controller standby --db "$POSTGRES_URL"
sleep 2
kill -9 "$(cat "$WORK/a.pid")"
check "a standby takes over within 30 s of the active's death" wait_for 30 serving standby
kill "$(cat "$WORK/standby.pid")"
controller a2 --db "$POSTGRES_URL"
check "a restarted controller serves within 30 s" wait_for 30 serving a2
kill "$(cat "$WORK/a2.pid")"
controller a --db "$POSTGRES_URL"
check "and so does the next" wait_for 30 serving a
denied=$(psql_as -U intruder -c "UPDATE fabricctl_leader SET expires = 'infinity', holder = 'intruder'" 2>&1)
check "a login without rights cannot write the lease ($denied)" grep -q "permission denied" <<<"$denied"
denied=$(psql_as -U intruder -c "DELETE FROM fabricctl_leader" 2>&1)
check "nor delete it" grep -q "permission denied" <<<"$denied"
kill "$(cat "$WORK/a.pid")"
released() { [[ $(psql_as -c "SELECT expires = '-infinity' FROM fabricctl_leader") == t ]]; }
check "a controller that stops cleanly gives its lease up" wait_for 10 released

# A table of the lease's name that another role made before the controllers' first start.
psql_as -c "CREATE ROLE squatter LOGIN" -c "CREATE DATABASE squat"
psql_as -d squat -c "GRANT CREATE ON SCHEMA public TO squatter"
psql_as -U squatter -d squat -c "CREATE TABLE fabricctl_leader (id INTEGER PRIMARY KEY, holder TEXT, epoch BIGINT, expires TIMESTAMPTZ)"
"$BIN/controller/fabric-controller" --listen 127.0.0.1:0 --db "$(url_of fabric squat)" >"$WORK/squat.log" 2>&1
code=$?
check "a lease table of another role's is refused at start (exit $code)" test "$code" -eq 3
check "and the refusal names its owner" said squat "fabricctl_leader belongs to role 'squatter'"

# PUBLIC may create in the schema (PostgreSQL 14 and older by default): a login made the
# controller's tables first, its schema-version table saying 999. Refused by name and owner.
psql_as -c "CREATE DATABASE early"
psql_as -d early -c "GRANT CREATE ON SCHEMA public TO PUBLIC"
psql_as -U intruder -d early -c "CREATE TABLE fabricctl_schema (version INTEGER NOT NULL)" \
  -c "INSERT INTO fabricctl_schema VALUES (999)" \
  -c "CREATE TABLE known_good (node TEXT PRIMARY KEY)" \
  -c "GRANT ALL ON fabricctl_schema, known_good TO PUBLIC" >/dev/null
"$BIN/controller/fabric-controller" --listen 127.0.0.1:0 --db "$(url_of fabric early)" >"$WORK/early.log" 2>&1
code=$?
check "tables another login made first are refused at start (exit $code)" test "$code" -eq 3
check "naming each and its owner" \
  bash -c "grep -q \"fabricctl_schema (owner 'intruder')\" '$WORK/early.log' && grep -q \"known_good (owner 'intruder')\" '$WORK/early.log'"

# A read-only server: never the active controller's database.
psql_as -c "CREATE DATABASE ro" -c "ALTER DATABASE ro SET default_transaction_read_only = on"
controller ro --db "$(url_of fabric ro)"
check "a read-only server is not taken for the primary" wait_for 20 said ro "read-only"
check "and nothing is served from it" bash -c "! grep -q 'listening on' '$WORK/ro.log'"
kill "$(cat "$WORK/ro.pid")"

# Passwords: never in argv.
"$BIN/controller/fabric-controller" --listen 127.0.0.1:0 --db "postgresql://keeper:s3cret@127.0.0.1:$PG_PORT/postgres" \
  >"$WORK/inline.log" 2>&1
code=$?
check "a --db URL carrying a password is refused (exit $code)" test "$code" -eq 3
check "and the refusal says where to put it, without repeating it" \
  bash -c "grep -q -- '--db-password-file' '$WORK/inline.log' && ! grep -q s3cret '$WORK/inline.log'"
psql_as -c "CREATE ROLE keeper LOGIN PASSWORD 's3cret'" -c "CREATE DATABASE keeperdb OWNER keeper"
# keeper must prove its password (scram), whatever the trust lines below say.
sed -i '1i host all keeper 127.0.0.1/32 scram-sha-256' "$PG_DIR/data/pg_hba.conf"
psql_as -c "SELECT pg_reload_conf()" >/dev/null
printf 's3cret\n' > "$WORK/password"
chmod 600 "$WORK/password"
controller nopass --db "$(url_of keeper keeperdb)"
check "without the password, no connection" wait_for 20 said nopass "password"
kill "$(cat "$WORK/nopass.pid")"
controller keeper --db "$(url_of keeper keeperdb)" --db-password-file "$WORK/password"
check "--db-password-file connects and serves" wait_for 20 serving keeper
check "and the password is in no process's command line" \
  bash -c "! grep -qa s3cret /proc/$(cat "$WORK/keeper.pid")/cmdline"
finish
