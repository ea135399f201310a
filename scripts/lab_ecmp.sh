# The practice lab's routed fabric, --ecmp (sourced by scripts/lab.sh, whose variables and
# helpers it uses: PREFIX, LAB, die, shape, leaf_of): leaves and spines as network namespaces
# routing IPv4, each leaf with one link to each spine, flows between leaves spread over the
# spines by ECMP on their own layer-4 headers.
#
# Each leaf's hosts keep their ports on the switch namespace's bridge leaf<K> (so that every
# per-host fault of the lab still applies) and live in 198.19.K.0/24; the bridge is the leaf's
# host side, and the leaf's router (namespace $PREFIX-leaf-K) sits on it at 198.19.K.254, the
# hosts' gateway. Leaf K and spine S share a point-to-point link l<K>s<S> / s<S>l<K> in
# 198.18.(100+K).(4S)/30 (leaf .4S+1, spine .4S+2). Each leaf routes every other leaf's subnet
# over all its spine links (one multipath route), each spine routes each leaf's subnet down its
# link to that leaf. The routers hash a packet's own 5-tuple (fib_multipath_hash_policy 3,
# fields 0x37: addresses, protocol, ports; policy 1 may use a TCP socket's random hash, so a
# trace and the flow it follows could part), answer ICMP time exceeded from the interface the
# packet came in by (icmp_errors_use_inbound_ifaddr: the address names the link) without a rate
# limit, and check no source route (rp_filter 0: the two directions of a flow take their own
# paths). Every router address has its name (leaf-K, spine-S) in the hosts file the hosts' and
# the controller's namespaces see (/etc/netns/NS/hosts, which `ip netns exec` mounts), so that a
# trace names the routers.

ECMP_NET=198.19

ecmp_host_ip() {  # HOST N LEAVES: host HOST's address
  echo "$ECMP_NET.$(leaf_of "$1" "$2" "$3").$1"
}

ecmp_link_ip() {  # LEAF SPINE SIDE(1 leaf, 2 spine)
  echo "198.18.$((100 + $1)).$((4 * $2 + $3))"
}

ecmp_router() {  # NS: a namespace that routes, hashes 5-tuples and answers every TTL
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=3 \
    net.ipv4.fib_multipath_hash_fields=0x37 net.ipv4.icmp_ratelimit=0 \
    net.ipv4.icmp_msgs_per_sec=100000 net.ipv4.icmp_msgs_burst=100000 \
    net.ipv4.icmp_errors_use_inbound_ifaddr=1 net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0
}

# The routers and their links; `slow` maps K:S to a rate (--slow-spine-link).
ecmp_fabric() {  # LEAVES SPINES
  local leaves=$1 spines=$2 k s
  for k in $(seq 1 "$leaves"); do
    ecmp_router "$PREFIX-leaf-$k"
    ip link add "$PREFIX-lr$k" netns "$PREFIX-leaf-$k" type veth peer name "lr$k" netns "$PREFIX-sw"
    ip -n "$PREFIX-leaf-$k" link set "$PREFIX-lr$k" name hosts
    ip -n "$PREFIX-leaf-$k" addr add "$ECMP_NET.$k.254/24" dev hosts
    ip -n "$PREFIX-leaf-$k" link set hosts up
    ip -n "$PREFIX-sw" link set "lr$k" master "leaf$k"
    ip -n "$PREFIX-sw" link set "lr$k" up
  done
  for s in $(seq 1 "$spines"); do ecmp_router "$PREFIX-spine-$s"; done
  for k in $(seq 1 "$leaves"); do
    for s in $(seq 1 "$spines"); do
      ip link add "$PREFIX-l${k}s$s" netns "$PREFIX-leaf-$k" type veth peer name "s${s}l$k" \
        netns "$PREFIX-spine-$s"
      ip -n "$PREFIX-leaf-$k" link set "$PREFIX-l${k}s$s" name "l${k}s$s"
      ip -n "$PREFIX-leaf-$k" addr add "$(ecmp_link_ip "$k" "$s" 1)/30" dev "l${k}s$s"
      ip -n "$PREFIX-spine-$s" addr add "$(ecmp_link_ip "$k" "$s" 2)/30" dev "s${s}l$k"
      ip -n "$PREFIX-leaf-$k" link set "l${k}s$s" up
      ip -n "$PREFIX-spine-$s" link set "s${s}l$k" up
      local rate=${slow[$k:$s]:-}
      if [[ -n $rate ]]; then
        shape "$PREFIX-leaf-$k" "l${k}s$s" "$rate"
        shape "$PREFIX-spine-$s" "s${s}l$k" "$rate"
      fi
      ip -n "$PREFIX-spine-$s" route add "$ECMP_NET.$k.0/24" via "$(ecmp_link_ip "$k" "$s" 1)"
    done
  done
  for k in $(seq 1 "$leaves"); do
    local l hops
    for l in $(seq 1 "$leaves"); do
      ((l == k)) && continue
      hops=()
      for s in $(seq 1 "$spines"); do
        hops+=(nexthop via "$(ecmp_link_ip "$k" "$s" 2)" dev "l${k}s$s")
      done
      ip -n "$PREFIX-leaf-$k" route add "$ECMP_NET.$l.0/24" "${hops[@]}"
    done
  done
}

# The routers' names, for the hosts' and the controller's resolvers.
ecmp_hosts_files() {  # LEAVES SPINES NAMESPACE...
  local leaves=$1 spines=$2 k s ns; shift 2
  local file=$LAB/ecmp-hosts
  {
    echo "127.0.0.1 localhost"
    for k in $(seq 1 "$leaves"); do
      echo "$ECMP_NET.$k.254 leaf-$k"
      for s in $(seq 1 "$spines"); do
        echo "$(ecmp_link_ip "$k" "$s" 1) leaf-$k"
        echo "$(ecmp_link_ip "$k" "$s" 2) spine-$s"
      done
    done
  } > "$file"
  for ns in "$@"; do
    mkdir -p "/etc/netns/$ns"
    cp "$file" "/etc/netns/$ns/hosts"
  done
}

ecmp_down() {  # the hosts files of this prefix's namespaces
  rm -rf /etc/netns/"$PREFIX"-* 2>/dev/null || true
}
