#!/usr/bin/env bash
# A local practice cluster: one fabric-controller and N fabric-agents, with mutual TLS from a
# private CA made for it.
#
#   scripts/lab.sh up N [--rate R|none] [--throttle HOST=RATE]... [--slow-egress HOST=RATE]...
#                       [--slow-link A-B=RATE]... [--drop-link A-B]... [--mtu HOST=MTU]...
#                       [--lossy HOST=PCT|all=PCT]... [--lossy-link A-B=PCT]...
#                       [--flap A-B=RATE/SECONDS]... [--jitter A-B=PCT]... [--latency-host HOST]...
#                       [--leaves K [--slow-uplink LEAF=RATE]... [--topology labels|lldp|none]
#                                   [--ecmp [--spines S] [--slow-spine-link leaf-K:spine-S=RATE]...]]
#                       [--rails N [--slow-nic HOST:RAIL=RATE]... [--slow-rail RAIL=RATE]...
#                                  [--lldp-rails] [--miscable HOST:RAIL=OTHER]... [--cabling FILE]
#                                  [--shared-nics HOST=RATE]...]
#                       [--expect-tcp GBPS] [--loopback] [--gpus HOST=N]... [--env HOST=VAR=VALUE]...
#                       [--cpu-hog HOST=PROCESSES]...
#   scripts/lab.sh sweep [fabricctl sweep flags]     run a sweep; exit code as fabricctl sweep's
#   scripts/lab.sh accept|nodes|map|history [flags] other fabricctl commands against the lab
#   scripts/lab.sh metrics                           scrape the controller's /metrics
#   scripts/lab.sh kill HOST                         kill one agent (to rehearse a dead node)
#   scripts/lab.sh restart HOST                      restart one agent as it was (a reboot, a rollout)
#   scripts/lab.sh throttle HOST RATE                shape a running host's link to RATE both ways
#   scripts/lab.sh flap HOST [TIMES [EVERY]]         its link down and up TIMES times: now, or every EVERY s
#   scripts/lab.sh check HOST [flags]                fabricctl check on HOST, with its agent's link watch
#   scripts/lab.sh restart-controller                restart the controller on its address and database
#   scripts/lab.sh down                              stop everything and remove the namespaces
#
# As root with iproute2, every host is a network namespace on a bridge (addresses in
# 198.18.0.0/24, reserved for benchmarking), so traffic crosses real veth links; each host's
# link is shaped to --rate (default 1gbit) with tc tbf in both directions, so that links, not
# the shared CPU, set the pace (--rate none: unshaped, the CPU sets it). Faults to rehearse:
# --throttle node-3=200mbit gives one host a slower link (both directions); --slow-egress
# node-3=200mbit slows only what it sends (a bad transmit lane); --slow-link node-1-node-2=150mbit
# slows the traffic between two hosts only (an HTB class per destination on both ends);
# --drop-link node-1-node-2 makes the two unable to reach each other while both still reach
# the controller and everyone else (a blackhole qdisc on that class); --mtu node-4=1400 gives a
# host another MTU; --lossy node-2=1 drops 1 % of the packets node-2 sends, at random (a bad
# transmit lane or optic; all=1: every host's, a lossy fabric); --lossy-link node-1-node-2=1
# drops 1 % of what each of the two sends to the other; --flap node-1-node-2=100mbit/3 runs
# the link between them at 100 Mbit/s for 3 s, at full rate for 3 s, and so on (a flapping
# port: a process per end changes its HTB class); --jitter node-1-node-2=5 sends 5 % of the
# small packets between them (a latency probe's messages) through a class starved of tokens,
# where each waits about 1 ms: a long tail with the median untouched, without netem, which
# this lab's kernels lack; --latency-host node-3 does that to every small packet node-3 sends
# to the other hosts (a host with many times the latency, its bandwidth untouched). --leaves 2
# spreads the hosts over two leaf bridges in turn by blocks (node-1..3 on leaf-1, node-4..6 on
# leaf-2 for six), each joined to a spine bridge by an uplink (a veth pair), the controller on
# the spine; every
# agent carries --label leaf=leaf-K, and the lab's configuration names the level
# (topology: {levels: [leaf]}) unless --topology none; --topology lldp labels nobody: an lldpd
# per leaf announces the leaf's name on its ports, an lldpd per host listens, and the agents
# learn their leaf from it (topology: {lldp: true}). --slow-uplink leaf-1=200mbit shapes
# that leaf's uplink both ways (the path between the leaves, or from that leaf to all others).
# --rails 2 gives every host a second NIC: rail r (from 0) is interface eth<r> on its own
# bridge (rail 0 is eth0, on the leaves when there are leaves; rail r > 0 a bridge rail<r>,
# addresses 198.18.<r>.0/24), shaped to --rate, and the configuration names the rails
# (rails: [{name: rail0, netdev: eth0}, ...]); --slow-nic node-3:1=200mbit shapes node-3's
# rail-1 NIC both ways (a NIC trained at a lower rate); --slow-rail 1=300mbit shapes every host's
# rail-1 NIC (the rail's switch trained low: a slow rail, no slow host). --lldp-rails makes each
# rail's switch speak LLDP (rail<R>-sw: an lldpd per rail announcing its name on its host ports,
# one per host listening on every rail's NIC, the agents reading it), the rails' switches joined
# to rail 0's as by a spine; --miscable node-6:1=0 cables node-6's rail-1 NIC to rail 0's switch
# (it still reaches rail 1, one hop further; implies --lldp-rails). --expect-tcp 0.9 writes
# expect.tcp_bw_gbps into the lab's configuration: what a healthy pair reaches. --cpu-hog
# node-2=2 runs two busy loops in node-2's namespace (a host whose CPU is busy; here the
# machine's, which every host shares). --cabling FILE gives the controller a cabling plan
# (topology.cabling; the rails' switch ports are p<i> on rail0-sw, r<R>p<i> on rail<R>-sw).
# --shared-nics node-3=1200mbit: what node-3's NICs send together passes one budget of that rate
# (lab_shaping.sh), each alone its own rate: a node that cannot feed its NICs at once.
# --ecmp makes the leaves and S spines (--spines, default 2) routers, each leaf linked to
# each spine, flows between leaves hashed over the spines (scripts/lab_ecmp.sh says how);
# --slow-spine-link leaf-1:spine-2=200mbit shapes that one member of the ECMP group both ways.
# Without root (or with --loopback) the
# agents share loopback, unshaped. --gpus node-1=2 gives a host two stand-in GPUs: the CUDA
# and NCCL test stand-ins ($BIN/tests/fake_gpu, built by bazel build //tests/fake_gpu:all;
# no real GPU, no real NCCL) so that `sweep --probes allreduce` takes the NCCL path; --env
# node-2=NCCL_IB_DISABLE=1 sets a variable in one agent's environment (a misconfiguration to
# rehearse: its NCCL falls back to sockets).
#
# Binaries come from $FABRIC_BIN (default bazel-bin; an installed package's: /usr/bin); state lives in $FABRIC_LAB_DIR (default
# .lab); namespaces are named $FABRIC_LAB_PREFIX-* (default fablab).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${FABRIC_BIN:-bazel-bin}
# The daemons as Bazel lays them out, or side by side as installed (FABRIC_BIN=/usr/bin).
if [[ -x $BIN/fabric-agent ]]; then
  CONTROLLER_BIN=$BIN/fabric-controller AGENT_BIN=$BIN/fabric-agent CLI_BIN=$BIN/fabricctl
else
  CONTROLLER_BIN=$BIN/controller/fabric-controller AGENT_BIN=$BIN/agent/fabric-agent
  CLI_BIN=$BIN/cli/fabricctl
fi
LAB=${FABRIC_LAB_DIR:-.lab}
PREFIX=${FABRIC_LAB_PREFIX:-fablab}
CERTS=$LAB/certs
# lldpd's control sockets: a short path (a unix socket's is at most 107 bytes; $LAB may be deep).
LLDP_DIR=/tmp/$PREFIX-lldpd
SUBNET=198.18.0
CONTROLLER_IP=$SUBNET.254
# The switches beyond the one bridge: rails, and LLDP on the leaves and rails.
# shellcheck source=scripts/lab_switches.sh
source scripts/lab_switches.sh
# The links' shaping: rates, losses, blackholes, flaps.
# shellcheck source=scripts/lab_shaping.sh
source scripts/lab_shaping.sh
# The routed leaves and spines of --ecmp.
# shellcheck source=scripts/lab_ecmp.sh
source scripts/lab_ecmp.sh

die() { echo "lab: $*" >&2; exit 3; }

tls_flags() { echo "--tls-cert $CERTS/$1.pem --tls-key $CERTS/$1.key --tls-ca $CERTS/ca.pem"; }

# Waits until FILE has a line containing TEXT; prints that line.
wait_for_line() {  # FILE TEXT SECONDS
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -m1 "$2" "$1"; return 0; fi
    sleep 0.1
  done
  return 1
}

in_ns() {  # NS COMMAND... (NS empty: this namespace)
  local ns=$1; shift
  if [[ -n $ns ]]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

start() {  # NAME NS COMMAND...
  local name=$1 ns=$2; shift 2
  : > "$LAB/$name.out"
  if [[ -n $ns ]]; then
    setsid ip netns exec "$ns" "$@" > "$LAB/$name.out" 2> "$LAB/$name.log" < /dev/null &
  else
    setsid "$@" > "$LAB/$name.out" 2> "$LAB/$name.log" < /dev/null &
  fi
  echo $! > "$LAB/$name.pid"
  # The command line, for `restart` (one word a line: every argument survives as it was).
  { echo "$ns"; printf '%s\n' "$@"; } > "$LAB/$name.cmd"
}

restart_host() {  # HOST: its agent stopped and started again as it was (a reboot, a rollout)
  local host=${1:-}
  [[ $host =~ ^node-[0-9]+$ && -f $LAB/$host.cmd ]] || die "restart: no host '$host'"
  if [[ -f $LAB/$host.pid ]]; then
    local pid
    pid=$(cat "$LAB/$host.pid")
    kill "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  local lines=()
  mapfile -t lines < "$LAB/$host.cmd"
  start "$host" "${lines[0]}" "${lines[@]:1}"
  wait_for_line "$LAB/$host.out" "registered with" 20 > /dev/null ||
    die "$host did not register again; see $LAB/$host.log"
  echo "lab: $host's agent restarted"
}

throttle_host() {  # HOST RATE: its link shaped to RATE both ways from now on (a port retrained)
  local host=${1:-} rate=${2:-}
  [[ $host =~ ^node-([0-9]+)$ ]] || die "throttle: HOST must be node-N"
  local i=${BASH_REMATCH[1]}
  [[ $rate =~ ^[0-9]+(kbit|mbit|gbit)$ ]] || die "throttle: RATE must be like 500mbit"
  ip -n "$PREFIX-sw" link show "p$i" >/dev/null 2>&1 || die "throttle: $host has no switch port (a loopback lab?)"
  shape "$PREFIX-sw" "p$i" "$rate"
  shape "$PREFIX-$host" eth0 "$rate"
  echo "lab: $host's link shaped to $rate"
}

up() {
  local n=${1:-}; shift || true
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 64)) || die "up: N must be 2-64, got '${n}'"
  local rate=1gbit loopback=0 leaves=1 topology=labels rails=1 expect_tcp="" lldp_rails=0 cabling=""
  local ecmp=0 spines=2
  declare -A slow=() shared_nics=() throttle=() mtu=() gpus=() envs=() egress=() per_dest=() loss=() uplink=() slow_nic=() slow_rail=() miscable=() hogs=()
  while (($#)); do
    case $1 in
      --gpus) gpus[${2%%=*}]=${2#*=}; shift 2 ;;
      --env) envs[${2%%=*}]+=" ${2#*=}"; shift 2 ;;
      --cpu-hog)
        [[ ${2:-} =~ ^node-[0-9]+=[0-9]+$ ]] || die "--cpu-hog: expected node-N=PROCESSES, got '${2:-}'"
        hogs[${2%%=*}]=${2#*=}; shift 2 ;;
      --rate) rate=$2; [[ $rate == none ]] && rate=""; shift 2 ;;
      --throttle) throttle[${2%%=*}]=${2#*=}; shift 2 ;;
      --slow-egress) egress[${2%%=*}]=${2#*=}; shift 2 ;;
      --slow-link|--drop-link)
        [[ ${2:-} =~ ^(node-[0-9]+)-(node-[0-9]+)(=(.+))?$ ]] || die "$1: expected node-A-node-B${1/--drop-link/}=RATE, got '${2:-}'"
        local what=${BASH_REMATCH[4]:-drop}
        [[ $1 == --slow-link && -z ${BASH_REMATCH[4]} ]] && die "--slow-link: give the rate, node-A-node-B=RATE"
        per_dest[${BASH_REMATCH[1]}]+=" ${BASH_REMATCH[2]#node-}=$what"
        per_dest[${BASH_REMATCH[2]}]+=" ${BASH_REMATCH[1]#node-}=$what"
        shift 2 ;;
      --flap|--lossy-link|--jitter)
        local pattern='^(node-[0-9]+)-(node-[0-9]+)=([0-9]+(\.[0-9]+)?)$' form=PCT
        [[ $1 == --flap ]] && pattern='^(node-[0-9]+)-(node-[0-9]+)=([0-9]+[kmg]?bit/[0-9]+(\.[0-9]+)?)$' form=RATE/SECONDS
        [[ ${2:-} =~ $pattern ]] || die "$1: expected node-A-node-B=$form, got '${2:-}'"
        if [[ $1 != --flap ]]; then
          awk -v p="${BASH_REMATCH[3]}" 'BEGIN { exit !(p > 0 && p < 100) }' || die "$1: PCT must be above 0 and below 100"
        else
          awk -v p="${BASH_REMATCH[3]#*/}" 'BEGIN { exit !(p >= 0.5) }' || die "--flap: SECONDS must be 0.5 or more"
        fi
        local tag=${1#--}; tag=${tag%-link}; tag=${tag/lossy/loss}
        per_dest[${BASH_REMATCH[1]}]+=" ${BASH_REMATCH[2]#node-}=$tag:${BASH_REMATCH[3]}"
        per_dest[${BASH_REMATCH[2]}]+=" ${BASH_REMATCH[1]#node-}=$tag:${BASH_REMATCH[3]}"
        shift 2 ;;
      --latency-host)
        [[ ${2:-} =~ ^node-[0-9]+$ ]] || die "--latency-host: expected node-N, got '${2:-}'"
        per_dest[$2]+=" any=jitter:100"; shift 2 ;;
      --mtu) mtu[${2%%=*}]=${2#*=}; shift 2 ;;
      --lossy)
        [[ ${2:-} =~ ^(node-[0-9]+|all)=([0-9]+(\.[0-9]+)?)$ ]] && awk -v p="${BASH_REMATCH[2]}" 'BEGIN { exit !(p > 0 && p < 100) }' ||
          die "--lossy: expected node-N=PCT or all=PCT with 0 < PCT < 100, got '${2:-}'"
        loss[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
        shift 2 ;;
      --leaves)
        [[ ${2:-} =~ ^[0-9]+$ ]] && ((${2} >= 1 && ${2} <= n)) || die "--leaves: expected 1-$n, got '${2:-}'"
        leaves=$2; shift 2 ;;
      --ecmp) ecmp=1; shift ;;
      --spines)
        [[ ${2:-} =~ ^[0-9]+$ ]] && ((${2} >= 1 && ${2} <= 16)) || die "--spines: expected 1-16, got '${2:-}'"
        spines=$2; shift 2 ;;
      --slow-spine-link)
        [[ ${2:-} =~ ^leaf-([0-9]+):spine-([0-9]+)=([0-9]+[kmg]?bit)$ ]] ||
          die "--slow-spine-link: expected leaf-K:spine-S=RATE (like 200mbit), got '${2:-}'"
        slow[${BASH_REMATCH[1]}:${BASH_REMATCH[2]}]=${BASH_REMATCH[3]}; shift 2 ;;
      --slow-uplink)
        [[ ${2:-} =~ ^leaf-([0-9]+)=(.+)$ ]] || die "--slow-uplink: expected leaf-K=RATE, got '${2:-}'"
        uplink[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift 2 ;;
      --topology)
        [[ ${2:-} =~ ^(labels|lldp|none)$ ]] || die "--topology: expected labels, lldp or none, got '${2:-}'"
        topology=$2; shift 2 ;;
      --cabling)  # relative to where the lab was called from (the script runs from the checkout)
        cabling=${2:-}; [[ $cabling == /* ]] || cabling=$OLDPWD/$cabling
        [[ -f $cabling ]] || die "--cabling: no such file '${2:-}'"
        shift 2 ;;
      --rails)
        [[ ${2:-} =~ ^[1-8]$ ]] || die "--rails: expected 1-8, got '${2:-}'"
        rails=$2; shift 2 ;;
      --slow-nic)
        [[ ${2:-} =~ ^(node-[0-9]+):([0-9]+)=(.+)$ ]] || die "--slow-nic: expected node-N:RAIL=RATE, got '${2:-}'"
        slow_nic[${BASH_REMATCH[1]}:${BASH_REMATCH[2]}]=${BASH_REMATCH[3]}; shift 2 ;;
      --slow-rail)
        [[ ${2:-} =~ ^([0-9]+)=(.+)$ ]] || die "--slow-rail: expected RAIL=RATE, got '${2:-}'"
        slow_rail[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift 2 ;;
      --lldp-rails) lldp_rails=1; shift ;;
      --shared-nics)
        [[ ${2:-} =~ ^(node-[0-9]+)=([0-9]+[kmg]?bit)$ ]] || die "--shared-nics: expected node-N=RATE, got '${2:-}'"
        shared_nics[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift 2 ;;
      --miscable)
        [[ ${2:-} =~ ^(node-[0-9]+):([0-9]+)=([0-9]+)$ ]] || die "--miscable: expected node-N:RAIL=OTHER, got '${2:-}'"
        miscable[${BASH_REMATCH[1]}:${BASH_REMATCH[2]}]=${BASH_REMATCH[3]}; lldp_rails=1; shift 2 ;;
      --expect-tcp)
        [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--expect-tcp: expected Gb/s, got '${2:-}'"
        expect_tcp=$2; shift 2 ;;
      --loopback) loopback=1; shift ;;
      *) die "up: unknown option $1" ;;
    esac
  done
  if ((ecmp)); then
    ((leaves > 1)) || die "--ecmp: give --leaves 2 or more (the routed leaves)"
    ((rails == 1 && ${#uplink[@]} == 0)) && [[ $topology == labels ]] ||
      die "--ecmp: the routed fabric takes no --rails, --slow-uplink or --topology"
  fi
  for k in "${!slow[@]}"; do
    ((ecmp)) || die "--slow-spine-link: give --ecmp"
    ((${k%%:*} >= 1 && ${k%%:*} <= leaves && ${k#*:} >= 1 && ${k#*:} <= spines)) ||
      die "--slow-spine-link: no link leaf-${k%%:*}:spine-${k#*:} ($leaves leaves, $spines spines)"
  done
  for k in "${!uplink[@]}"; do ((k >= 1 && k <= leaves)) || die "--slow-uplink: no leaf-$k (--leaves $leaves)"; done
  for r in "${!slow_rail[@]}"; do
    ((r < rails)) || die "--slow-rail: no rail $r (--rails $rails counts from 0)"
    for i in $(seq 1 "$n"); do slow_nic[node-$i:$r]=${slow_nic[node-$i:$r]:-${slow_rail[$r]}}; done
  done
  for k in "${!slow_nic[@]}"; do
    local h=${k%%:*} r=${k#*:}
    ((${h#node-} >= 1 && ${h#node-} <= n)) || die "--slow-nic: no $h (up $n)"
    ((r < rails)) || die "--slow-nic: no rail $r (--rails $rails counts from 0)"
  done
  if ((lldp_rails)); then
    ((rails > 1)) || die "--lldp-rails, --miscable: give --rails 2 or more"
    ((leaves == 1)) && [[ $topology != lldp ]] || die "--lldp-rails, --miscable: the rails' switches speak LLDP without --leaves"
    command -v lldpd >/dev/null || die "--lldp-rails: lldpd is not installed (apt-get install lldpd)"
  fi
  for k in "${!miscable[@]}"; do
    local h=${k%%:*} r=${k#*:} o=${miscable[$k]}
    ((${h#node-} >= 1 && ${h#node-} <= n)) || die "--miscable: no $h (up $n)"
    ((r >= 1 && r < rails)) || die "--miscable: RAIL must be 1-$((rails - 1)) (rail 0 carries the agent's address)"
    ((o < rails && o != r)) || die "--miscable: OTHER must be another rail, 0-$((rails - 1))"
  done
  if [[ $topology == lldp ]]; then
    ((leaves > 1)) || die "--topology lldp: give --leaves"
    command -v lldpd >/dev/null || die "--topology lldp: lldpd is not installed (apt-get install lldpd)"
  fi
  for b in "$CONTROLLER_BIN" "$AGENT_BIN" "$CLI_BIN"; do
    [[ -x $b ]] || die "missing $b: build first (bazel build //...)"
  done
  local stand_ins=""
  if ((${#gpus[@]})); then
    for lib in libfake_cuda.so libfake_nccl.so; do
      [[ -f $BIN/tests/fake_gpu/$lib ]] || die "--gpus: missing $BIN/tests/fake_gpu/$lib (bazel build //tests/fake_gpu:all)"
    done
    stand_ins=$(cd "$BIN/tests/fake_gpu" && pwd)
  fi
  if [[ $loopback == 0 ]] && { [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; }; then
    echo "lab: not root or no iproute2: agents share loopback, unshaped" >&2
    loopback=1
  fi
  if [[ $loopback == 1 ]] && ((leaves > 1 || rails > 1)); then
    die "--leaves and --rails need root and iproute2: leaves and rails are bridges in network namespaces"
  fi
  down quiet
  # A new lab is a new cluster: its registry and history start empty (restart-controller keeps them).
  rm -f "$LAB/fabric.db" "$LAB/fabric.db-wal" "$LAB/fabric.db-shm" "$LAB/flaps"
  mkdir -p "$LAB"
  # Each certificate carries only the address its process is dialled at: in namespaces, the
  # controller's and each agent's own; on loopback, loopback's (--loopback). fabricctl's is a
  # client's only.
  # fabric-prolog: a Slurm prolog's own operator identity (prolog.yaml below).
  local certs=(fabricctl fabric-prolog)
  if [[ $loopback == 0 ]]; then
    ((ecmp)) && CONTROLLER_IP=$ECMP_NET.1.250
    certs+=("fabric-controller=IP:$CONTROLLER_IP")
    for i in $(seq 1 "$n"); do certs+=("node-$i=IP:$(host_ip "$i")"); done
  else
    certs+=(--loopback fabric-controller)
    for i in $(seq 1 "$n"); do certs+=("node-$i"); done
  fi
  bash scripts/make-certs.sh "$CERTS" "${certs[@]}" > /dev/null

  local ctl_ns="" listen_host=127.0.0.1
  if [[ $loopback == 0 ]]; then
    # The switch: a bridge in its own namespace; every host hangs off it by a veth pair.
    ctl_ns=$PREFIX-ctl
    ip netns add "$PREFIX-sw"
    ip -n "$PREFIX-sw" link add br0 type bridge
    ip -n "$PREFIX-sw" link set br0 up
    # With leaves: br0 is the spine, each leaf a bridge joined to it by an uplink (--ecmp:
    # each leaf's hosts' side, its router on it; lab_ecmp.sh).
    for k in $(seq 1 "$leaves"); do
      ((leaves > 1)) || break
      ip -n "$PREFIX-sw" link add "leaf$k" type bridge
      ip -n "$PREFIX-sw" link set "leaf$k" up
      ((ecmp)) && continue
      ip -n "$PREFIX-sw" link add "up$k" type veth peer name "down$k"
      ip -n "$PREFIX-sw" link set "up$k" master "leaf$k"
      ip -n "$PREFIX-sw" link set "down$k" master br0
      shape "$PREFIX-sw" "up$k" "${uplink[$k]:-}"
      shape "$PREFIX-sw" "down$k" "${uplink[$k]:-}"
    done
    attach() {  # NS IP INDEX MTU RATE LOSS [EGRESS_RATE [DEST=RATE|drop]...]: RATE into the host, EGRESS_RATE out
      ip netns add "$1"
      ip -n "$1" link set lo up
      ip link add "$PREFIX-h$3" netns "$1" type veth peer name "p$3" netns "$PREFIX-sw"
      ip -n "$1" link set "$PREFIX-h$3" name eth0
      ip -n "$1" addr add "$2/24" dev eth0
      ip -n "$PREFIX-sw" link set "p$3" master "${bridge_of[$3]:-br0}"
      if [[ -n $4 ]]; then ip -n "$1" link set eth0 mtu "$4"; fi
      if [[ -n $5 ]]; then shape "$PREFIX-sw" "p$3" "$5"; fi
      local ns=$1 port=p$3 loss=$6; shift 6
      local egress_rate=${1:-}; shift || true
      shape_egress "$ns" "$egress_rate" "$loss" "$@"
      ip -n "$ns" link set eth0 up
      ip -n "$PREFIX-sw" link set "$port" up
    }
    declare -A bridge_of=()
    ((ecmp)) && bridge_of[0]=leaf1
    if ((leaves > 1)); then
      for i in $(seq 1 "$n"); do bridge_of[$i]=leaf$(leaf_of "$i" "$n" "$leaves"); done
    fi
    attach "$ctl_ns" "$CONTROLLER_IP" 0 "" "" "" ""
    for i in $(seq 1 "$n"); do
      local host_rate=${slow_nic[node-$i:0]:-${throttle[node-$i]:-$rate}} dests=()
      for spec in ${per_dest[node-$i]:-}; do
        local to=${spec%%=*}
        [[ $to == any ]] || to=$(host_ip "$to")
        dests+=("$to=${spec#*=}")
      done
      attach "$PREFIX-node-$i" "$(host_ip "$i")" "$i" "${mtu[node-$i]:-}" "$host_rate" \
        "${loss[node-$i]:-${loss[all]:-}}" "${egress[node-$i]:-$host_rate}" "${dests[@]}"
    done
    listen_host=$CONTROLLER_IP
    if ((ecmp)); then
      ecmp_fabric "$leaves" "$spines"
      ip -n "$ctl_ns" route add default via "$ECMP_NET.1.254"
      local hosts_ns=("$ctl_ns")
      for i in $(seq 1 "$n"); do
        ip -n "$PREFIX-node-$i" route add default via "$ECMP_NET.$(leaf_of "$i" "$n" "$leaves").254"
        hosts_ns+=("$PREFIX-node-$i")
      done
      ecmp_hosts_files "$leaves" "$spines" "${hosts_ns[@]}"
    fi
    if [[ $topology == lldp ]]; then start_lldpd "$n" "$leaves"; fi
    for r in $(seq 1 $((rails - 1))); do add_rail "$r" "$n" "$rate"; done
    for h in "${!shared_nics[@]}"; do
      ((rails > 1 && ${h#node-} <= n)) || die "--shared-nics: give --rails 2 or more, and a host of the lab"
      share_nics "$PREFIX-$h" "$rails" "${shared_nics[$h]}"
    done
    if ((lldp_rails)); then join_rails "$n" "$rails"; start_rail_lldpd "$n" "$rails"; fi
  fi
  # Thresholds for a lab: the product's defaults for bandwidth (judged against the fabric's
  # typical figure and spread), but every host shares this machine's CPUs, so microsecond
  # latencies wander by several times with the scheduler: only a large multiple counts. And a
  # starved host's TCP retransmits with nothing lost on the wire (a healthy unshaped lab of 5
  # with a core kept busy: up to 0.27 % of a direction's segments): loss counts from 0.5 %.
  local certs_abs
  certs_abs=$(cd "$CERTS" && pwd)
  [[ -z $cabling ]] || cp "$cabling" "$LAB/cabling.txt"
  cat > "$LAB/lab.yaml" <<YAML
# Practice-lab configuration written by scripts/lab.sh.
thresholds:
  relative_lat: 10
  min_loss_rate: 0.005
probes:
  sizes: "1M"
  duration: 1s
sweep:
  pairing: full
  pair_timeout: 20s
  probes: [tcp_bw, tcp_lat]
$( { ((leaves > 1)) && [[ $topology != none ]]; } || [[ -n $cabling ]] && echo 'topology:')
$( ((leaves > 1)) && [[ $topology == labels ]] && echo '  levels: [leaf]')
$( ((ecmp)) && echo "  ecmp_paths: $spines")
$( ((leaves > 1)) && [[ $topology == lldp ]] && echo '  lldp: true')
$( [[ -n $cabling ]] && echo '  cabling: cabling.txt')
$( ((rails > 1)) && { echo 'rails:'; for r in $(seq 0 $((rails - 1))); do echo "  - {name: rail$r, netdev: eth$r}"; done; })
$( [[ -n $expect_tcp ]] && printf 'expect:\n  tcp_bw_gbps: %s\n' "$expect_tcp")
tls:
  cert: $certs_abs/fabricctl.pem
  key: $certs_abs/fabricctl.key
  ca: $certs_abs/ca.pem
YAML
  # The agents' own: the link watch samples every second (a flap between sweeps is seen at once).
  printf '# Agents of the practice lab, written by scripts/lab.sh.\nwatch:\n  interval: 1s\n' > "$LAB/agent.yaml"
  # The same, as a Slurm prolog sees it: its own certificate (an operator's, not the
  # administrator's), so that its sweeps queue apart from fabricctl's.
  sed -e "s|$certs_abs/fabricctl\.|$certs_abs/fabric-prolog.|" "$LAB/lab.yaml" > "$LAB/prolog.yaml"

  echo "$ctl_ns" > "$LAB/controller.ns"
  start_controller "$listen_host:0"
  local controller
  controller=$(cat "$LAB/controller.address")
  for i in $(seq 1 "$n"); do
    local ns="" host=127.0.0.1
    if [[ $loopback == 0 ]]; then ns=$PREFIX-node-$i; host=$(host_ip "$i"); fi
    # The agent's environment: stand-in GPUs where asked (none elsewhere), then --env.
    local env=()
    if [[ -n ${gpus[node-$i]:-} ]]; then
      env+=("FABRIC_CUDA_LIBRARY=$stand_ins/libfake_cuda.so" "FABRIC_NCCL_LIBRARY=$stand_ins/libfake_nccl.so"
            "FABRIC_FAKE_GPUS=${gpus[node-$i]}")
    elif [[ -n $stand_ins ]]; then
      env+=("FABRIC_CUDA_LIBRARY=/nonexistent/libcuda.so.1")
    fi
    # shellcheck disable=SC2206
    env+=(${envs[node-$i]:-})
    # shellcheck disable=SC2046
    start "node-$i" "$ns" env "${env[@]}" "$AGENT_BIN" --controller "$controller" \
      --listen "$host:0" --node-name "node-$i" --label "rack=r$(( (i - 1) / 4 + 1 ))" \
      $( ((leaves > 1)) && [[ $topology != lldp ]] && echo --label "leaf=leaf-$(leaf_of "$i" "$n" "$leaves")") \
      $( [[ $topology == lldp ]] || ((lldp_rails)) && echo --lldp-socket "$LLDP_DIR/node-$i.sock") \
      --nccl-log-dir "$LAB/nccl-node-$i" --config "$LAB/agent.yaml" \
      --watch-file "$LAB/watch-node-$i" $(tls_flags "node-$i")
  done
  for i in $(seq 1 "$n"); do
    wait_for_line "$LAB/node-$i.out" "registered with" 20 > /dev/null ||
      die "node-$i did not register; see $LAB/node-$i.log"
  done
  flap_links
  # Busy loops in a host's namespace: its CPU (this machine's, shared) kept busy.
  local hog k
  for hog in "${!hogs[@]}"; do
    for k in $(seq 1 "${hogs[$hog]}"); do
      start "hog-$hog-$k" "$( ((loopback)) || echo "$PREFIX-$hog")" sh -c 'while :; do :; done'
    done
  done
  if [[ $loopback == 0 ]]; then
    echo "lab: controller on $controller and $n agents in namespaces $PREFIX-node-1..$n, links ${rate:-unshaped}$( ((leaves > 1)) && echo ", $leaves leaves")$( ((ecmp)) && echo " routed over $spines spines (ECMP)"), mutual TLS"
  else
    echo "lab: controller on $controller and $n agents on loopback, mutual TLS"
  fi
}

host_ip() {  # HOST (1-based): its address (--ecmp: in its leaf's subnet)
  if ((${ecmp:-0})); then ecmp_host_ip "$1" "$n" "$leaves"; else echo "$SUBNET.$1"; fi
}

leaf_of() {  # HOST N LEAVES: the leaf of host HOST (1-based) of N spread by blocks over LEAVES
  echo $(( ($1 - 1) * $3 / $2 + 1 ))
}

start_controller() {  # LISTEN [METRICS_LISTEN]
  local metrics=${2:-${1%:*}:0}
  # shellcheck disable=SC2046
  start controller "$(cat "$LAB/controller.ns")" "$CONTROLLER_BIN" \
    --listen "$1" --db "$LAB/fabric.db" --config "$LAB/lab.yaml" --heartbeat-interval 1s \
    --stale-after 4s --metrics-listen "$metrics" $(tls_flags fabric-controller)
  local line
  line=$(wait_for_line "$LAB/controller.out" "listening on" 20) ||
    die "controller did not start; see $LAB/controller.log"
  echo "${line##* }" > "$LAB/controller.address"
  line=$(wait_for_line "$LAB/controller.out" "metrics on" 5) || die "no metrics endpoint"
  echo "${line##* }" > "$LAB/metrics.url"
}

restart_controller() {
  [[ -f $LAB/controller.pid && -f $LAB/controller.address ]] || die "no lab running"
  local address pid
  address=$(cat "$LAB/controller.address")
  pid=$(cat "$LAB/controller.pid")
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  local metrics
  metrics=$(sed -E 's|^http://([^/]+)/metrics$|\1|' "$LAB/metrics.url")
  start_controller "$address" "$metrics"
  echo "lab: controller restarted on $address"
}

fabricctl_cmd() {  # fabricctl against the lab's controller, from the controller's namespace
  [[ -f $LAB/controller.address ]] || die "no lab running (scripts/lab.sh up N)"
  in_ns "$(cat "$LAB/controller.ns")" "$CLI_BIN" --config "$LAB/lab.yaml" \
    --controller "$(cat "$LAB/controller.address")" "$@"
}

flap_host() {  # HOST [TIMES [EVERY]]: its switch port down and up, TIMES times (a flapping link)
  local host=${1:-} times=${2:-1} every=${3:-}
  [[ $host =~ ^node-([0-9]+)$ && -f $LAB/$host.pid ]] || die "flap: no running host '$host'"
  local port=p${BASH_REMATCH[1]}
  [[ $times =~ ^[0-9]+$ ]] && ((times >= 1 && times <= 100)) || die "flap: TIMES must be 1-100"
  [[ -z $every || ($every =~ ^[0-9]+$ && $every -ge 1 && $every -le 3600) ]] ||
    die "flap: EVERY must be 1-3600 seconds"
  ip -n "$PREFIX-sw" link show "$port" >/dev/null 2>&1 || die "flap: $host has no switch port (a loopback lab?)"
  local once="ip -n $PREFIX-sw link set $port down; sleep 0.3; ip -n $PREFIX-sw link set $port up; sleep 0.5"
  if [[ -n $every ]]; then
    # On a schedule, in the background (its pid in $LAB: `down` stops it): one flap every EVERY
    # seconds, the first after EVERY seconds.
    setsid bash -c "for _ in \$(seq 1 $times); do sleep $every; $once; done" </dev/null >/dev/null 2>&1 &
    echo $! > "$LAB/flap-$host.pid"
    echo "lab: $host's link goes down and up every ${every}s, $times times"
    return
  fi
  for _ in $(seq 1 "$times"); do bash -c "$once"; done
  echo "lab: $host's link went down and up $times times"
}

check_host() {  # HOST [fabricctl check flags]: the check in the host's namespace, its agent's watch
  local host=${1:-}
  [[ $host =~ ^node-[0-9]+$ && -f $LAB/$host.pid ]] || die "check: no running host '$host'"
  shift
  local ns=""
  ip netns list 2>/dev/null | grep -q "^$PREFIX-$host\b" && ns=$PREFIX-$host
  in_ns "$ns" "$CLI_BIN" check --node-name "$host" --watch-file "$LAB/watch-$host" "$@"
}

kill_node() {
  [[ -f $LAB/$1.pid ]] || die "kill: no running $1"
  kill -9 "$(cat "$LAB/$1.pid")" 2>/dev/null || true
  # setsid ran `ip netns exec`, which exec'd the agent: the pid is the agent's.
  rm -f "$LAB/$1.pid"
  echo "lab: killed $1"
}

down() {
  local stopped=0
  for pidfile in "$LAB"/*.pid; do
    [[ -f $pidfile ]] || continue
    kill "$(cat "$pidfile")" 2>/dev/null && stopped=$((stopped + 1)) || true
    rm -f "$pidfile"
  done
  rm -f "$LAB/controller.address"
  if command -v ip >/dev/null && [[ $(id -u) -eq 0 ]]; then
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX-" || true); do
      # Anything left in a namespace goes with it.
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true
    done
  fi
  rm -rf "$LLDP_DIR" 2>/dev/null || true
  [[ $(id -u) -ne 0 ]] || ecmp_down
  [[ ${1:-} == quiet ]] || echo "lab: stopped $stopped processes"
}

case ${1:-} in
  up) shift; up "$@" ;;
  sweep|accept|nodes|map|history) fabricctl_cmd "$@" ;;
  kill) kill_node "${2:-}" ;;
  restart) restart_host "${2:-}" ;;
  throttle) throttle_host "${2:-}" "${3:-}" ;;
  flap) flap_host "${2:-}" "${3:-1}" "${4:-}" ;;
  check) shift; check_host "$@" ;;
  restart-controller) restart_controller ;;
  metrics)
    [[ -f $LAB/metrics.url ]] || die "no lab running"
    in_ns "$(cat "$LAB/controller.ns")" python3 -c \
      'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
      "$(cat "$LAB/metrics.url")" ;;
  down) down ;;
  *) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 3 ;;
esac
