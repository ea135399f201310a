#!/usr/bin/env bash
# Creates a private CA and one certificate per process of a practice cluster, for mutual TLS.
#
#   scripts/make-certs.sh DIR [--san SAN]... NAME...
#
# DIR/ca.pem and DIR/ca.key are the CA (created once, reused when present); DIR/NAME.pem and
# DIR/NAME.key each process's certificate and key, usable as server and as client. Every
# certificate names NAME as its CN and DNS SAN, plus localhost, 127.0.0.1, ::1 and each --san
# (e.g. --san IP:198.18.0.2 --san DNS:node-2.lab). The controller's certificate must be named
# fabric-controller (the identity agents accept probe requests from, --controller-identity).
#
# Example: scripts/make-certs.sh .lab/certs fabric-controller fabricctl node-1 node-2
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || usage 0
dir=$1; shift
sans=()
names=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --san) [[ $# -ge 2 ]] || { echo "make-certs: --san needs a value" >&2; exit 2; }
           sans+=("$2"); shift 2 ;;
    -*) echo "make-certs: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || { echo "make-certs: name at least one process" >&2; exit 2; }
command -v openssl >/dev/null || { echo "make-certs: openssl not found (scripts/setup.sh)" >&2; exit 2; }

mkdir -p "$dir"
umask 077
if [[ ! -s $dir/ca.pem || ! -s $dir/ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 \
    -subj "/CN=fabricctl practice CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi

for name in "${names[@]}"; do
  [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || { echo "make-certs: bad name '$name'" >&2; exit 2; }
  san="DNS:$name,DNS:localhost,IP:127.0.0.1,IP:::1"
  for extra in "${sans[@]+"${sans[@]}"}"; do san="$san,$extra"; done
  ext=$(mktemp)
  trap 'rm -f "$ext"' EXIT
  printf '%s\n' \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth,clientAuth" \
    "subjectAltName=$san" > "$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 825 -extfile "$ext" -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr" "$ext"
done
echo "make-certs: CA and ${#names[@]} certificates in $dir"
