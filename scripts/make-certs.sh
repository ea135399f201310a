#!/usr/bin/env bash
# Creates a private CA and one certificate per process of a practice cluster, for mutual TLS.
#
#   scripts/make-certs.sh DIR [--san SAN]... [--loopback] NAME[=SAN,SAN...]...
#
# DIR/ca.pem and DIR/ca.key are the CA (created once, reused when present); DIR/NAME.pem and
# DIR/NAME.key each process's certificate and key, usable as server and as client. Every
# certificate names NAME as its CN and DNS SAN, and carries besides (a SAN is DNS:NAME or IP:ADDR):
#   NAME=SAN,SAN  SANs of that certificate only: the addresses and names the process is dialled
#                 at (e.g. node-2=IP:198.18.0.2,DNS:node-2.lab)
#   --san SAN     a SAN of every certificate named after it on the command line: for a name they
#                 share, such as a Service's DNS name
#   --loopback    localhost, 127.0.0.1 and ::1 on every certificate named after it: only for a
#                 process dialled on loopback (a controller reached on 127.0.0.1, agents of a
#                 practice cluster that share loopback). No other certificate carries them: a
#                 node may register under any name its certificate carries, and a server
#                 certificate with loopback names answers for whatever is dialled there.
# The controller's certificate must be named fabric-controller (the identity agents accept probe
# requests from, --controller-identity).
#
# Example: scripts/make-certs.sh .lab/certs fabricctl fabric-controller=IP:10.0.0.1 \
#            node-1=IP:10.0.0.11 node-2=IP:10.0.0.12
set -euo pipefail

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "make-certs: $*" >&2; exit 2; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || usage 0
dir=$1; shift
# A SAN goes into an openssl extension file as it is: nothing but a DNS name or an IP address
# (no comma, newline or other extension can ride in on it).
check_san() {
  [[ $1 =~ ^(DNS:[A-Za-z0-9*._-]+|IP:[0-9A-Fa-f:.]+)$ ]] ||
    die "bad SAN '$1' (DNS:NAME or IP:ADDRESS)"
}
loopback_sans="DNS:localhost,IP:127.0.0.1,IP:::1"
shared=""    # the --san values so far
loopback=0   # --loopback seen
names=() sans=()  # each certificate's name and its SANs, in order
pending=""   # an option that no name has followed yet
while [[ $# -gt 0 ]]; do
  case $1 in
    --san) [[ $# -ge 2 ]] || die "--san needs a value"
           check_san "$2"
           shared="$shared,$2" pending=--san; shift 2 ;;
    --loopback) loopback=1 pending=--loopback; shift ;;
    -*) die "unknown option $1" ;;
    *) name=${1%%=*} own=""
       [[ $1 == *=* ]] && own=${1#*=}
       [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "bad name '$name'"
       # DIR/ca.pem and DIR/ca.key are the CA's: a process named ca would overwrite them.
       [[ $name != ca ]] || die "'ca' names the CA's own files; name the process otherwise"
       san="DNS:$name"
       ((loopback)) && san="$san,$loopback_sans"
       san="$san$shared"
       if [[ $1 == *=* ]]; then  # NAME=SAN,SAN: each one checked, an empty one too
         while :; do
           check_san "${own%%,*}"
           san="$san,${own%%,*}"
           [[ $own == *,* ]] || break
           own=${own#*,}
         done
       fi
       names+=("$name") sans+=("$san") pending=""
       shift ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || die "name at least one process"
# --san and --loopback apply to the names after them: one after the last name does nothing.
[[ -z $pending ]] ||
  die "$pending after the last name applies to no certificate: put it before the names it is for"
command -v openssl >/dev/null || die "openssl not found (scripts/setup.sh)"

mkdir -p "$dir"
umask 077
if [[ ! -s $dir/ca.pem || ! -s $dir/ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 \
    -subj "/CN=fabricctl practice CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi

ext=""
trap 'rm -f "$ext"' EXIT
for i in "${!names[@]}"; do
  name=${names[$i]}
  ext=$(mktemp)
  printf '%s\n' \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth,clientAuth" \
    "subjectAltName=${sans[$i]}" > "$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 825 -extfile "$ext" -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr" "$ext"
done
echo "make-certs: CA and ${#names[@]} certificates in $dir"
