#!/usr/bin/env bash
# Installs the Debian packages listed in deps/debian-packages.txt (or in the list file given as
# the first argument, e.g. deps/bench-gemm-packages.txt) that are not installed yet.
# Idempotent and quiet when nothing is missing, so `make run` / `make test` can call it every time.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
missing=()
while read -r pkg; do
  pkg="${pkg%%#*}"; pkg="$(echo "$pkg" | xargs)"
  [ -z "$pkg" ] && continue
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done < "${1:-$here/deps/debian-packages.txt}"
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "tilefuse setup: installing missing Debian packages: ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
