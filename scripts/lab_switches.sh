# The practice lab's switches beyond its one bridge (sourced by scripts/lab.sh, whose variables
# and helpers it uses: PREFIX, LAB, LLDP_DIR, die, shape, leaf_of, and up()'s options, such as
# slow_nic and miscable): each rail's bridge and NICs, the rails joined as by a spine, and LLDP
# spoken by the leaves' and the rails' switches.

# Rail R (R >= 1): a bridge rail<R> in the switch namespace and, on every host, eth<R> on it
# (198.18.R.i/24), shaped to RATE both ways, or to the host's --slow-nic rate for this rail.
add_rail() {  # R N RATE
  local r=$1 n=$2 rate=$3 i
  ip -n "$PREFIX-sw" link add "rail$r" type bridge
  ip -n "$PREFIX-sw" link set "rail$r" up
  for i in $(seq 1 "$n"); do
    local ns=$PREFIX-node-$i nic_rate=${slow_nic[node-$i:$r]:-$rate}
    ip link add "$PREFIX-r$r-h$i" netns "$ns" type veth peer name "r${r}p$i" netns "$PREFIX-sw"
    ip -n "$ns" link set "$PREFIX-r$r-h$i" name "eth$r"
    ip -n "$ns" addr add "198.18.$r.$i/24" dev "eth$r"
    # --miscable: this NIC cabled to another rail's switch (rail 0's is br0).
    local other=${miscable[node-$i:$r]:-} bridge=rail$r
    [[ -n $other ]] && bridge=$( ((other == 0)) && echo br0 || echo "rail$other")
    ip -n "$PREFIX-sw" link set "r${r}p$i" master "$bridge"
    shape "$PREFIX-sw" "r${r}p$i" "$nic_rate"
    shape "$ns" "eth$r" "$nic_rate"
    ip -n "$ns" link set "eth$r" up
    ip -n "$PREFIX-sw" link set "r${r}p$i" up
  done
}

# LLDP as switches speak it: one lldpd per leaf on that leaf's host ports, announcing the
# leaf's name, and one per host, listening on its eth0 (its own control socket, which the
# agent reads). Each waits until the hosts have heard their leaf.
start_lldpd() {  # N LEAVES
  local n=$1 leaves=$2 k i
  rm -rf "$LLDP_DIR" 2>/dev/null || true
  # Made afresh (a directory someone else made there in between is refused), and searchable:
  # lldpcli drops to lldpd's user before it connects.
  mkdir -m 755 "$LLDP_DIR" || die "cannot make $LLDP_DIR"
  for k in $(seq 1 "$leaves"); do
    local ports=()
    for i in $(seq 1 "$n"); do [[ $(leaf_of "$i" "$n" "$leaves") == "$k" ]] && ports+=("p$i"); done
    local IFS=,
    ip netns exec "$PREFIX-sw" lldpd -u "$LLDP_DIR/leaf-$k.sock" -p "$LLDP_DIR/leaf-$k.pid" \
      -I "${ports[*]}" -M 4 -S "" 2>> "$LAB/lldpd.log"
    unset IFS
  done
  for i in $(seq 1 "$n"); do
    ip netns exec "$PREFIX-node-$i" lldpd -r -u "$LLDP_DIR/node-$i.sock" -p "$LLDP_DIR/node-$i.pid" \
      -I eth0 2>> "$LAB/lldpd.log"
  done
  for k in $(seq 1 "$leaves"); do
    local tries=0
    until ip netns exec "$PREFIX-sw" lldpcli -u "$LLDP_DIR/leaf-$k.sock" configure system hostname "leaf-$k" >/dev/null 2>&1; do
      ((++tries < 50)) || die "lldpd of leaf-$k did not start; see $LAB/lldpd.log"
      sleep 0.1
    done
    ip netns exec "$PREFIX-sw" lldpcli -u "$LLDP_DIR/leaf-$k.sock" configure lldp tx-interval 1 >/dev/null
  done
  for i in $(seq 1 "$n"); do
    local want=leaf-$(leaf_of "$i" "$n" "$leaves") tries=0
    until ip netns exec "$PREFIX-node-$i" lldpcli -u "$LLDP_DIR/node-$i.sock" -f keyvalue show neighbors 2>/dev/null |
        grep -q "chassis.name=$want\$"; do
      ((++tries < 100)) || die "node-$i did not hear $want over LLDP; see $LAB/lldpd.log"
      sleep 0.1
    done
  done
}

# With --lldp-rails: each rail's switch joined to rail 0's by a link (as a spine joins them), so
# that a NIC cabled to another rail's switch still reaches its rail, one hop further; and each
# host answers ARP only for an address on the interface asked (arp_ignore=1, as multi-NIC hosts
# are set up), so that one rail's traffic never takes another rail's NIC.
join_rails() {  # N RAILS
  local n=$1 rails=$2 r i
  for r in $(seq 1 $((rails - 1))); do
    ip -n "$PREFIX-sw" link add "isl$r" type veth peer name "isl${r}s"
    ip -n "$PREFIX-sw" link set "isl$r" master "rail$r"
    ip -n "$PREFIX-sw" link set "isl${r}s" master br0
    ip -n "$PREFIX-sw" link set "isl$r" up
    ip -n "$PREFIX-sw" link set "isl${r}s" up
  done
  for i in $(seq 1 "$n"); do
    ip netns exec "$PREFIX-node-$i" sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
  done
}

# LLDP on the rails' switches: one lldpd per rail's switch (rail<R>-sw: br0 for rail 0, the bridge
# rail<R> for the others) on the host ports cabled to it, announcing its name; one per host
# listening on every rail's interface. Each waits until every host has heard, on each NIC, the
# switch that NIC is cabled to.
start_rail_lldpd() {  # N RAILS
  local n=$1 rails=$2 r i
  rm -rf "$LLDP_DIR" 2>/dev/null || true
  mkdir -m 755 "$LLDP_DIR" || die "cannot make $LLDP_DIR"
  for r in $(seq 0 $((rails - 1))); do
    local bridge=rail$r ports
    ((r == 0)) && bridge=br0
    ports=$(ip -n "$PREFIX-sw" -o link show master "$bridge" | awk -F': ' '{print $2}' | cut -d@ -f1 |
      grep -v -e '^isl' -e '^p0$' | paste -sd,)
    # Configured before its first frame (lldpd stays paused until its configuration is read):
    # the switches share a namespace, so each needs a chassis id of its own, or a host that
    # hears two of them would take them for one switch and give both its name.
    printf 'configure system hostname rail%s-sw\nconfigure system chassisid rail%s-sw\nconfigure lldp tx-interval 1\n' \
      "$r" "$r" > "$LLDP_DIR/rail$r.conf"
    chmod 644 "$LLDP_DIR/rail$r.conf"
    ip netns exec "$PREFIX-sw" lldpd -u "$LLDP_DIR/rail$r.sock" -p "$LLDP_DIR/rail$r.pid" \
      -O "$LLDP_DIR/rail$r.conf" -I "$ports" -M 4 -S "" 2>> "$LAB/lldpd.log"
  done
  local ifs
  ifs=$(seq 0 $((rails - 1)) | sed 's/^/eth/' | paste -sd,)
  for i in $(seq 1 "$n"); do
    ip netns exec "$PREFIX-node-$i" lldpd -r -u "$LLDP_DIR/node-$i.sock" -p "$LLDP_DIR/node-$i.pid" \
      -I "$ifs" 2>> "$LAB/lldpd.log"
  done
  for i in $(seq 1 "$n"); do
    for r in $(seq 0 $((rails - 1))); do
      local want=rail${miscable[node-$i:$r]:-$r}-sw tries=0
      until ip netns exec "$PREFIX-node-$i" lldpcli -u "$LLDP_DIR/node-$i.sock" -f keyvalue show neighbors 2>/dev/null |
          grep -q "^lldp\.eth$r\.chassis\.name=$want\$"; do
        ((++tries < 100)) || die "node-$i did not hear $want on eth$r over LLDP; see $LAB/lldpd.log"
        sleep 0.1
      done
    done
  done
}
