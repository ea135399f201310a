#!/usr/bin/env bash
# "Unreachable" means down: the Slurm prolog (deploy/slurm/fabric-prolog, with a fake scontrol
# and the real fabricctl) facing a TLS server with a foreign CA's certificate on the
# controller's address (an impostor), and the real controller refusing a prolog certificate of
# another CA (a rotation it was left out of), holds the job (FABRIC_ON_ERROR) and counts it as
# reason "tls"; with nothing listening the controller is down, and FABRIC_ON_UNREACHABLE (allow)
# decides. Needs openssl; no root.
set -uo pipefail
[[ -f tests/testlib.sh && -d deploy/slurm ]] || cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/testlib.sh
source tests/testlib.sh

T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tls-gate.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
CLI=$PWD/cli/fabricctl
# The cluster's CA (A) and a foreign one (B), each with a controller and a prolog certificate.
bash scripts/make-certs.sh "$T/a" --loopback fabric-controller fabric-prolog > /dev/null
bash scripts/make-certs.sh "$T/b" --loopback fabric-controller fabric-prolog > /dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The real controller, with the cluster's certificate.
controller/fabric-controller --listen 127.0.0.1:0 --db "$T/fabric.db" \
  --tls-cert "$T/a/fabric-controller.pem" --tls-key "$T/a/fabric-controller.key" \
  --tls-ca "$T/a/ca.pem" > "$T/controller.out" 2> "$T/controller.log" &
pids+=($!)
# An impostor: a TLS server with the foreign CA's certificate.
impostor=$(free_port)
openssl s_server -quiet -accept "127.0.0.1:$impostor" -cert "$T/b/fabric-controller.pem" \
  -key "$T/b/fabric-controller.key" -alpn h2 > /dev/null 2>&1 < /dev/null &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$T/controller.out" && break; sleep 0.1; done
real=$(sed -n 's/.*listening on //p' "$T/controller.out" | head -n1)
check "the controller listens ($real)" test -n "$real"
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 1 100); do accepts "$impostor" && break; sleep 0.1; done
check "the impostor listens (port $impostor)" accepts "$impostor"

fake_scontrol "$T/bin" gpu001 gpu002

# prolog NAME CONTROLLER CA CERT: the prolog of job NAME against CONTROLLER, trusting CA's
# certificate authority and presenting CERT's prolog certificate; its exit code.
prolog() {
  local job=$1 controller=$2 ca=$3 cert=$4
  env -i PATH="$T/bin:/usr/bin:/bin" TMPDIR="$T" FABRIC_SLURM_DEFAULTS="$T/no-defaults" \
    FABRICCTL="$CLI" FAKE_LOG="$T/scontrol.log" FABRIC_GATE_METRICS="$T/gate.prom" \
    FABRIC_SWEEP_WAIT=5s FABRIC_SWEEP_ARGS="--config $T/none.yaml --controller $controller --timeout 5s --tls-ca $T/$ca/ca.pem --tls-cert $T/$cert/fabric-prolog.pem --tls-key $T/$cert/fabric-prolog.key" \
    SLURM_JOB_ID="$job" SLURM_JOB_NODELIST='gpu[001-002]' sh deploy/slurm/fabric-prolog 2> "$T/prolog-$job.err"
}
: > "$T/none.yaml"

rc=0; prolog 1 "127.0.0.1:$impostor" a a || rc=$?
check "an impostor with a foreign CA's certificate: the job is held (exit $rc)" test "$rc" = 1
check "the prolog says tls and FABRIC_ON_ERROR" grep -q "no fabric verdict (tls): job held (FABRIC_ON_ERROR=hold)" "$T/prolog-1.err"
check "fabricctl names the certificate the cluster's CA did not sign" \
  grep -q "presented a certificate the cluster's CA ($T/a/ca.pem) did not sign" "$T/prolog-1.err"

rc=0; prolog 2 "$real" a b || rc=$?
check "the real controller refusing a prolog certificate of another CA: held (exit $rc)" test "$rc" = 1
check "fabricctl names the refused certificate" grep -q "it refused this client's certificate ($T/b/fabric-prolog.pem" "$T/prolog-2.err"

# Nothing at the address: the controller is down, and the site's FABRIC_ON_UNREACHABLE decides.
rc=0; prolog 3 "127.0.0.1:$(free_port)" a a || rc=$?
check "nothing listening: unreachable, the job runs (exit $rc)" test "$rc" = 0
check "and is counted apart" grep -q 'fabricctl_gate_errors_total{reason="unreachable",action="allow"} 1' "$T/gate.prom"
check "each refused handshake counted as tls, held" grep -q 'fabricctl_gate_errors_total{reason="tls",action="hold"} 2' "$T/gate.prom"
if ((fail > 0)); then for f in "$T"/prolog-*.err; do echo "== $f"; cat "$f"; done; fi
finish
