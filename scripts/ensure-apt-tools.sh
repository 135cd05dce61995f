#!/usr/bin/env bash
# Makes sure the system tools the suites drive are installed: Chromium (end-to-end specs;
# CHROMIUM_PATH overrides /usr/bin/chromium), redis-server (cluster tests; REDIS_SERVER_BIN
# overrides the one on PATH), haproxy (load-balanced cluster runs) and the processing service's
# engines: ffmpeg/ffprobe, libvips's command-line tools, and ClamAV's clamd plus sigtool (the
# virus-scan tests build their own signature database, so no freshclam download is needed). Does
# nothing when all are there. As root on Debian or Ubuntu it installs what is missing through apt;
# otherwise it says exactly what to install and fails, so `make test` stops before suites that
# would fail anyway.
set -euo pipefail

have() { command -v "$1" >/dev/null || [[ -x /usr/sbin/$1 ]]; }

missing=()
[[ -x ${CHROMIUM_PATH:-/usr/bin/chromium} ]] || missing+=(chromium)
[[ -n ${REDIS_SERVER_BIN:-} && -x ${REDIS_SERVER_BIN:-} ]] || have redis-server || missing+=(redis-server)
have haproxy || missing+=(haproxy)
{ have ffmpeg && have ffprobe; } || missing+=(ffmpeg)
{ have vips && have vipsthumbnail && have vipsheader; } || missing+=(libvips-tools)
have sigtool || missing+=(clamav)
have clamd || missing+=(clamav-daemon)
((${#missing[@]})) || exit 0

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "ensure-apt-tools: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

{
  echo "ensure-apt-tools: the tests need ${missing[*]}, which this machine lacks."
  echo "Install (Debian/Ubuntu): sudo apt-get install ${missing[*]}"
  if [[ " ${missing[*]} " == *" chromium "* ]]; then
    echo "(or set CHROMIUM_PATH to a Chromium or Chrome binary elsewhere)"
  fi
} >&2
exit 1
