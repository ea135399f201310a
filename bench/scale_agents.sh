#!/usr/bin/env bash
# fabricctl at size on one machine: N real fabric-agent processes on loopback (plain text, as
# loopback allows) registered with one fabric-controller, then a quick, a sampled (3 rounds) and
# a topology-aware sweep (leaves of 32 agents) of tcp_bw (64 KiB messages) and tcp_lat, 200 ms
# each. For each N: how long the agents took to register (from the first start to the last
# registration the controller logs; the agents are started by one launcher per core), each
# sweep's wall time and its overhead over the probes' own time (per round, the longest pair's
# probe time; rounds added up), the sweep's re-tests, what it added to the store (per pair
# measured and per node), the controller's peak RSS and CPU seconds, the agents' memory
# (RSS, and PSS: what each adds once the shared libraries are counted once), and how long the
# running agents take to register with a new controller when the first is killed.
#
#   bench/scale_agents.sh [N...]          (default 100 300 1000; writes bench/results/scale_agents.txt)
#   PAIRINGS=full bench/scale_agents.sh 160   (other sweeps; writes bench/results/scale_agents-full.txt)
#   DB=postgresql bench/scale_agents.sh 100   (the store in a PostgreSQL started here; -postgresql.txt)
#   FABRIC_BIN=DIR ...                    (binaries from DIR, laid out as bazel-bin; no build)
#
# Goals on a 2-core machine: 1,000 agents registered within 10 s, a sampled sweep of 1,000 nodes
# within 5 minutes, the controller under 1 GiB.
source "$(dirname "$0")/lib.sh"
SIZES=("$@")
PAIRINGS=${PAIRINGS:-quick sample topology}
DB=${DB:-sqlite}
SUFFIX=""
[[ $PAIRINGS == "quick sample topology" ]] || SUFFIX=-${PAIRINGS// /-}
[[ $DB == sqlite ]] || SUFFIX=$SUFFIX-$DB
((${#SIZES[@]})) || SIZES=(100 300 1000)
if [[ -z ${FABRIC_BIN:-} ]]; then
  (cd "$ROOT" && bazel build //cli:fabricctl //agent:fabric-agent //controller:fabric-controller >/dev/null 2>&1) ||
    { echo "bench: build failed" >&2; exit 3; }
fi
BIN=${FABRIC_BIN:-$ROOT/bazel-bin}
AGENT=$BIN/agent/fabric-agent CONTROLLER=$BIN/controller/fabric-controller FABRICCTL=$BIN/cli/fabricctl
ulimit -n 65536 2>/dev/null || true
WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  [[ $DB == postgresql ]] && stop_postgres
  rm -rf "$WORK"
}
trap cleanup EXIT
if [[ $DB == postgresql ]]; then
  source "$ROOT/tests/postgres.sh"
  need_tool psql postgresql-client
  [[ -n $(postgres_bin) ]] || { echo "bench: PostgreSQL's server is not installed (scripts/setup.sh)" >&2; exit 3; }
  start_postgres >/dev/null
  trap cleanup EXIT  # start_postgres set its own
fi

# Seconds since the epoch, with fractions.
now() { date +%s.%N; }

# The figures of one sweep's JSON report: wall seconds, the probes' own seconds, rounds,
# re-test rounds and pairs, pairs measured, findings.
sweep_figures() {
  python3 - "$1" <<'PY'
import json, sys
def seconds(d):
    return float(d.rstrip("s")) if d else 0.0
r = json.load(open(sys.argv[1]))
per_round = {}
for pair in r["health"].get("pairs", []):
    by_round = {}
    for res in pair.get("results", []):
        rnd = res.get("round", 0)
        by_round[rnd] = by_round.get(rnd, 0.0) + seconds(res.get("elapsed"))
    for rnd, t in by_round.items():
        per_round[rnd] = max(per_round.get(rnd, 0.0), t)
s = r["summary"]
print(f'{seconds(s.get("elapsed")):.1f} {sum(per_round.values()):.1f} {len(per_round)} '
      f'{s.get("retest_rounds", 0)} {s.get("retested_pairs", 0)} {s.get("retests_skipped", 0)} '
      f'{s.get("pairs", 0)} {len(r.get("findings", []))}', end=" ")
kinds = {}
for f in r.get("findings", []):
    kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
print(",~".join(f"{n}~{k}" for k, n in sorted(kinds.items(), key=lambda x: -x[1])) or "-")
PY
}

# Peak RSS (MiB) and CPU seconds of a process.
proc_figures() {
  local hwm ticks
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$1/status")
  ticks=$(awk '{print $14 + $15}' "/proc/$1/stat")
  awk -v h="$hwm" -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f %.1f", h / 1024, t / hz}'
}

# The store's logical size in bytes: SQLite's pages in use (the WAL's included), or the
# PostgreSQL database's size.
store_bytes() {
  if [[ $DB == postgresql ]]; then
    psql "$1" -Atc 'SELECT pg_database_size(current_database())'
  else
    python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
q = lambda p: c.execute("PRAGMA " + p).fetchone()[0]
print((q("page_count") - q("freelist_count")) * q("page_size"))' "$1"
  fi
}

# Starts N agents of the controller at $2 in $3 from one launcher per core (a shell starts one
# process at a time); their pids in $3/pids, their logs in $3/agents.K.log (one per launcher).
launch_agents() {
  local n=$1 controller=$2 dir=$3 launchers k started=()
  launchers=$(nproc)
  for ((k = 0; k < launchers; k++)); do
    (
      for ((i = k + 1; i <= n; i += launchers)); do
        "$AGENT" --config "$dir/fabricctl.yaml" --controller "$controller" --listen 127.0.0.1:0 \
          --node-name "a-$i" --label "leaf=leaf-$(((i - 1) / 32 + 1))" --nccl-log-dir "$dir/nccl" \
          >>"$dir/agents.$k.log" 2>&1 &
        echo $! >>"$dir/pids.$k"
      done
    ) &
    started+=($!)
  done
  wait "${started[@]}"
  cat "$dir"/pids.* >"$dir/pids"
}

# How many distinct nodes the controller's log at $1 says registered.
registered_nodes() { grep -o 'node [^ ]* registered from' "$1" | sort -u | wc -l; }

# Seconds from $1 until the controller's log at $2 has $3 distinct nodes registered; "over
# 120" when it never does.
registered_after() {
  local start=$1 log=$2 n=$3
  until (($(registered_nodes "$log") >= n)); do
    if awk -v s="$start" -v t="$(now)" 'BEGIN {exit !(t - s > 120)}'; then echo "over 120"; return; fi
    sleep 0.05
  done
  awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'
}

# Registration attempts the agents of $1 logged as failed, and the commonest reason.
failed_registrations() {
  local failed reason
  failed=$(cat "$1"/agents.*.log 2>/dev/null | grep -c 'cannot register' || true)
  reason=$(cat "$1"/agents.*.log 2>/dev/null | grep 'cannot register' |
    sed 's/.*cannot register with controller [^ ]*: //; s/; retrying$//' | cut -c1-90 | sort | uniq -c | sort -rn | head -1 || true)
  echo "$failed failed attempts${reason:+, most: ${reason#"${reason%%[! ]*}"}}"
}

# Waits until none of the pids in the file $1 is alive (at most 60 s): agents started by a
# launcher are not this shell's children.
wait_gone() {
  local until=$((SECONDS + 60)) pid
  while ((SECONDS < until)); do
    for pid in $(cat "$1"); do
      [[ -e /proc/$pid ]] && { sleep 0.2; continue 2; }
    done
    return 0
  done
}

# Starts the controller of $1 on port $2 with the store $3, logging to $1/$4; its pid in
# CONTROLLER_PID once it listens.
start_controller() {
  "$CONTROLLER" --config "$1/fabricctl.yaml" --listen "127.0.0.1:$2" --db "$3" >"$1/$4" 2>&1 &
  CONTROLLER_PID=$!
  PIDS+=("$CONTROLLER_PID")
  until grep -q "listening on" "$1/$4"; do
    kill -0 "$CONTROLLER_PID" 2>/dev/null || { echo "bench: the controller did not start" >&2; cat "$1/$4" >&2; exit 3; }
    sleep 0.05
  done
}

# The controller of $1 (pid $2, port $3) dies and a new one with an empty store ($4) takes its
# place once every agent has noticed (a heartbeat, 10 s, and then some): RESTART_SECONDS is how
# long until all $5 agents have registered with it, which is what a restart or a standby's
# takeover costs; the new controller's pid in CONTROLLER_PID. Not in a subshell: it starts
# the controller that run_size stops.
reregistered_after_restart() {
  local dir=$1 port=$3 n=$5 start
  kill -9 "$2" 2>/dev/null
  wait "$2" 2>/dev/null || true  # reaped here, without the shell's "Killed" line
  sleep 12
  start_controller "$dir" "$port" "$4" restarted.log
  start=$(now)
  RESTART_SECONDS=$(registered_after "$start" "$dir/restarted.log" "$n")
}

run_size() {
  local n=$1 dir=$WORK/n$1 port db
  mkdir -p "$dir"
  port=$(free_port)
  db=$dir/c.db
  if [[ $DB == postgresql ]]; then
    psql "$POSTGRES_URL" -qc "CREATE DATABASE n$n" >/dev/null
    db=${POSTGRES_URL%/*}/n$n
  fi
  cat > "$dir/fabricctl.yaml" <<YAML
probes:
  sizes: "64K"
  duration: 200ms
sweep:
  probes: [tcp_bw, tcp_lat]
  pair_timeout: 30s
  sample_rounds: 3
topology:
  levels: [leaf]
YAML
  start_controller "$dir" "$port" "$db" controller.log
  local controller=$CONTROLLER_PID
  local start launch reg agents=()
  start=$(now)
  launch_agents "$n" "127.0.0.1:$port" "$dir"
  launch=$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
  mapfile -t agents <"$dir/pids"
  PIDS+=("${agents[@]}")
  reg=$(registered_after "$start" "$dir/controller.log" "$n")
  local ctl=("$FABRICCTL" --config "$dir/fabricctl.yaml" --controller "127.0.0.1:$port") online
  online=$("${ctl[@]}" --timeout 30s nodes --format json 2>/dev/null |
    python3 -c 'import json, sys; print(sum(x.get("state") == "NODE_ONLINE" for x in json.load(sys.stdin).get("nodes", [])))' 2>/dev/null || echo 0)
  echo "N=$n: $online of $n agents registered in $reg s (starting them took $launch s, $(nproc) launchers; $(failed_registrations "$dir"))"
  local pairing before after
  for pairing in $PAIRINGS; do
    before=$(store_bytes "$db")
    "${ctl[@]}" --timeout 30m sweep --pairing "$pairing" --format json --output "$dir/$pairing.json" \
      >/dev/null 2>"$dir/$pairing.err" || true
    if [[ ! -s $dir/$pairing.json ]]; then
      echo "  $pairing: no report ($(tail -1 "$dir/$pairing.err"))"
      continue
    fi
    after=$(store_bytes "$db")
    read -r wall probes rounds rr rp rs pairs findings kinds < <(sweep_figures "$dir/$pairing.json")
    [[ $kinds == - ]] && kinds="" || kinds=" (${kinds//\~/ })"
    printf '  %-8s %6.1f s wall, probes %6.1f s over %s rounds (overhead %5.1f %%), %s pairs, re-tests %s pairs in %s rounds (%s skipped), %s findings%s\n' \
      "$pairing" "$wall" "$probes" "$rounds" "$(awk -v w="$wall" -v p="$probes" 'BEGIN {print (p > 0 ? (w / p - 1) * 100 : 0)}')" \
      "$pairs" "$rp" "$rr" "$rs" "$findings" "$kinds"
    awk -v b="$before" -v a="$after" -v p="$pairs" -v n="$n" -v db="$DB" 'BEGIN {
      d = a - b; printf "           store +%.0f KiB (%s): %.0f bytes per pair measured, %.1f KiB per node\n", d / 1024, db, p ? d / p : 0, d / n / 1024 }'
  done
  local rss cpu agent_rss agent_pss alive
  read -r rss cpu < <(proc_figures "$controller") || true
  alive=$(for p in "${agents[@]}"; do [[ -e /proc/$p ]] && echo "$p"; done | wc -l)
  agent_rss=$({ for p in "${agents[@]}"; do awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || true; done; } | median || echo 0)
  agent_pss=$({ for p in "${agents[@]}"; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || true; done; } | median || echo 0)
  echo "  controller: peak RSS $rss MiB, $cpu CPU seconds; agents ($alive of $n alive): median RSS $(awk -v k="$agent_rss" 'BEGIN {printf "%.0f", k / 1024}') MiB, PSS $(awk -v k="$agent_pss" 'BEGIN {printf "%.0f", k / 1024}') MiB"
  echo "  store: $(($(store_bytes "$db") / 1024)) KiB after these sweeps ($DB)"
  local fresh=$dir/fresh.db
  if [[ $DB == postgresql ]]; then
    psql "$POSTGRES_URL" -qc "CREATE DATABASE n${n}_fresh" >/dev/null
    fresh=${POSTGRES_URL%/*}/n${n}_fresh
  fi
  reregistered_after_restart "$dir" "$controller" "$port" "$fresh" "$n"
  online=$("${ctl[@]}" --timeout 30s nodes --format json 2>/dev/null |
    python3 -c 'import json, sys; print(sum(x.get("state") == "NODE_ONLINE" for x in json.load(sys.stdin).get("nodes", [])))' 2>/dev/null || echo 0)
  echo "  restart: the controller killed, a new one with an empty store had $online of $n agents registered again in $RESTART_SECONDS s"
  kill "${agents[@]}" "$CONTROLLER_PID" 2>/dev/null || true
  wait_gone "$dir/pids"
  wait 2>/dev/null || true
  PIDS=()
}

{
  trap cleanup EXIT  # this group is a pipeline's subshell: its PIDS are its own
  machine
  echo "command: PAIRINGS='$PAIRINGS' DB=$DB bench/scale_agents.sh ${SIZES[*]}  (agents on loopback; tcp_bw 64K + tcp_lat, 200 ms each, both directions)"
  for n in "${SIZES[@]}"; do run_size "$n"; done
} | tee "$RESULTS/scale_agents$SUFFIX.txt"
