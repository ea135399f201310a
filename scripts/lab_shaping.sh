# The practice lab's link shaping (sourced by scripts/lab.sh, whose variables and helpers it
# uses: PREFIX, LAB, die): tc on the hosts' and switches' interfaces, rates, losses, blackholes,
# per-destination classes, and the --flap links' schedules.

shape() {  # NS DEV RATE [LOSS_PCT]: tbf on DEV's egress; with a loss, htb and lose_packets
  ip -n "$1" link set "$2" up
  if [[ -n ${4:-} ]]; then
    tc -n "$1" qdisc replace dev "$2" root handle 1: htb default 10 r2q 10000
    tc -n "$1" class add dev "$2" parent 1: classid 1:10 htb rate "${3:-100gbit}" 2>/dev/null
    lose_packets "$1" "$2" "$4"
  elif [[ -n $3 ]]; then
    tc -n "$1" qdisc replace dev "$2" root tbf rate "$3" burst 256kb latency 50ms
  fi
}

# Under DEV's htb root 1:, PCT % of the packets at random into a blackhole (class 1:99):
# a classic BPF filter compares the kernel's random number with PCT % of 2^32 (this lab's
# kernels have no netem). The host sends one segment per packet (gso_max_segs 1), so that a
# loss is one packet, not a 64 KiB TSO burst.
lose_packets() {  # NS DEV PCT
  local below
  below=$(awk -v p="$3" 'BEGIN { printf "%.0f", p / 100 * 4294967296 }')
  ip -n "$1" link set dev "$2" gso_max_segs 1
  tc -n "$1" class add dev "$2" parent 1: classid 1:99 htb rate 100gbit 2>/dev/null
  tc -n "$1" qdisc add dev "$2" parent 1:99 handle 99: blackhole
  # ld random; random >= below: no match; else the blackhole's class.
  tc -n "$1" filter add dev "$2" parent 1: protocol ip prio 1 bpf \
    bytecode "4,32 0 0 4294963256,53 1 0 $below,6 0 0 4294967295,6 0 0 0" flowid 1:99
}

# A host's egress (eth0 in NS): RATE for everything (empty: unshaped), but DEST_IP=RATE classes
# at their own rate and DEST_IP=drop classes into a blackhole. One tbf when there is nothing
# per destination; HTB with a u32 filter per destination otherwise.
shape_egress() {  # NS RATE LOSS_PCT [DEST_IP=RATE|drop]...
  local ns=$1 rate=$2 loss=$3; shift 3
  ip -n "$ns" link set eth0 up
  if (($# == 0)); then
    shape "$ns" eth0 "$rate" "$loss"
    return
  fi
  tc -n "$ns" qdisc replace dev eth0 root handle 1: htb default 10 r2q 10000
  tc -n "$ns" class add dev eth0 parent 1: classid 1:10 htb rate "${rate:-100gbit}" 2>/dev/null
  if [[ -n $loss ]]; then lose_packets "$ns" eth0 "$loss"; fi
  local id=20 spec
  for spec in "$@"; do
    local dest=${spec%%=*} what=${spec#*=}
    case $what in
      loss:*)  # PCT % of what goes to DEST into a blackhole (class 1:99)
        blackhole_class "$ns" eth0
        to_dest_filter "$ns" eth0 "$dest" "${what#loss:}" 1:99 ""
        continue ;;
      jitter:*)  # PCT % of DEST's small packets through a starved class (1:98): a long tail
        starved_class "$ns" eth0
        to_dest_filter "$ns" eth0 "$dest" "${what#jitter:}" 1:98 small
        continue ;;
      drop)
        tc -n "$ns" class add dev eth0 parent 1: classid "1:$id" htb rate 1mbit 2>/dev/null
        tc -n "$ns" qdisc add dev eth0 parent "1:$id" handle "$id:" blackhole ;;
      flap:*)  # full rate now; flap_links toggles it between RATE and full every SECONDS
        local slow_and_period=${what#flap:}
        tc -n "$ns" class add dev eth0 parent 1: classid "1:$id" htb rate "${rate:-100gbit}" 2>/dev/null
        echo "$ns 1:$id ${slow_and_period%%/*} ${rate:-100gbit} ${slow_and_period#*/}" >> "$LAB/flaps" ;;
      *) tc -n "$ns" class add dev eth0 parent 1: classid "1:$id" htb rate "$what" 2>/dev/null ;;
    esac
    tc -n "$ns" filter add dev eth0 parent 1: protocol ip prio 2 u32 match ip dst "$dest/32" flowid "1:$id"
    id=$((id + 1))
  done
}

# Class 1:99 under DEV's htb root: a blackhole (once).
blackhole_class() {  # NS DEV
  tc -n "$1" class show dev "$2" classid 1:99 | grep -q . && return 0
  tc -n "$1" class add dev "$2" parent 1: classid 1:99 htb rate 100gbit 2>/dev/null
  tc -n "$1" qdisc add dev "$2" parent 1:99 handle 99: blackhole
}

# Class 1:98 under DEV's htb root: 512 kbit/s with no burst, so that every packet through it
# waits for its own tokens: a latency probe's message about 1 ms, where this machine's links
# answer in tens of microseconds. A tail without netem (this lab's kernels have none): what a
# congested queue or a flapping port does to a few packets.
starved_class() {  # NS DEV
  tc -n "$1" class show dev "$2" classid 1:98 | grep -q . && return 0
  tc -n "$1" class add dev "$2" parent 1: classid 1:98 htb rate 512kbit ceil 512kbit burst 1 cburst 1 2>/dev/null
  tc -n "$1" qdisc add dev "$2" parent 1:98 handle 98: pfifo limit 1000
}

# A classic BPF filter (prio 1, before the per-destination classes) sending PCT % of the IPv4
# packets to DEST_IP (`any`: to anyone but the controller), at random, to FLOWID; with
# `small`, only packets of 53 to 299 bytes (a latency probe's messages; not bare ACKs, 52 bytes with TCP timestamps, nor
# full segments). The IP header follows the 14-byte Ethernet header.
to_dest_filter() {  # NS DEV DEST_IP|any PCT FLOWID [small]
  local below code=() a b c d
  below=$(awk -v p="$4" 'BEGIN { printf "%.0f", p / 100 * 4294967296 }')
  # Each check jumps to the last instruction (no match, "E") when it fails.
  if [[ $3 != any ]]; then
    IFS=. read -r a b c d <<<"$3"
    code+=("32 0 0 30" "21 0 E $(( (a << 24) | (b << 16) | (c << 8) | d ))")  # ld [30]; jeq DEST
  else  # anyone but the controller: a host's heartbeats and reports are not the fault
    IFS=. read -r a b c d <<<"$CONTROLLER_IP"
    code+=("32 0 0 30" "21 E 0 $(( (a << 24) | (b << 16) | (c << 8) | d ))")  # ld [30]; jeq CONTROLLER
  fi
  if [[ ${6:-} == small ]]; then code+=("40 0 0 16" "37 0 E 52" "53 E 0 300"); fi  # ldh [16]; 52 < len < 300
  if ((below < 4294967296)); then code+=("32 0 0 4294963256" "53 E 0 $below"); fi  # ld random; jge BELOW
  code+=("6 0 0 4294967295" "6 0 0 0")
  local n=${#code[@]} i bytecode=${#code[@]}
  for i in "${!code[@]}"; do bytecode+=",${code[$i]//E/$((n - 2 - i))}"; done
  # Unlike lose_packets, segmentation offload stays on: sending one segment per packet costs
  # this machine's CPUs enough to make both ends slow senders, a fault of its own. A lost
  # offloaded burst is many segments at once, but the share of segments lost is PCT % still.
  tc -n "$1" filter add dev "$2" parent 1: protocol ip prio 1 bpf bytecode "$bytecode" flowid "$5"
}

# Every --flap link's classes: RATE for SECONDS, full rate for SECONDS, and so on, by one
# process per class (its pid in $LAB, so that `down` stops it). The first change comes at a
# random point of the first period, the same for every class of this lab (a link's two ends flap
# together): a port does not flap in step with the lab's start, nor with a sweep's rounds.
flap_links() {
  [[ -f $LAB/flaps ]] || return 0
  local ns class slow full period k=0 start
  start=$(awk -v r="$RANDOM" 'BEGIN {printf "%.2f", r / 32768}')
  while read -r ns class slow full period; do
    setsid bash -c "sleep \$(awk 'BEGIN {print $start * $period}'); while :; do tc -n $ns class change dev eth0 parent 1: classid $class htb rate $slow; \
      sleep $period; tc -n $ns class change dev eth0 parent 1: classid $class htb rate $full; sleep $period; done" \
      </dev/null >/dev/null 2>&1 &
    echo $! > "$LAB/flap-$k.pid"
    k=$((k + 1))
  done < "$LAB/flaps"
}

# --shared-nics: everything the host's NICs eth0..eth<RAILS-1> send passes one tbf of RATE first
# (an ifb device they all redirect to), then each NIC's own shaping: each rail alone reaches its
# own rate, the rails together only RATE, as a host whose PCIe root complex, CPU or memory
# cannot feed its NICs at once.
share_nics() {  # NS RAILS RATE
  local ns=$1 rails=$2 rate=$3 r
  ip -n "$ns" link add nicbudget type ifb
  ip -n "$ns" link set nicbudget up
  tc -n "$ns" qdisc replace dev nicbudget root tbf rate "$rate" burst 256kb latency 50ms
  for r in $(seq 0 $((rails - 1))); do
    tc -n "$ns" qdisc add dev "eth$r" clsact
    tc -n "$ns" filter add dev "eth$r" egress protocol all u32 match u32 0 0 \
      action mirred egress redirect dev nicbudget
  done
}
