#!/usr/bin/env bash
# Builds the Go client of RWQ/1 and its conformance adapter, bin/rwq-adapter.
#   build.sh        copy the canonical scripts from lua/ (go generate), go vet, build the adapter
#   build.sh test   the same, then the Go tests (they start their own redis-server)
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: Go 1.21 or newer is required to build the Go adapter (https://go.dev/dl/)" >&2
  exit 1
fi
go generate ./rwq
go vet ./...
go build -o bin/rwq-adapter ./cmd/rwq-adapter
if [ "${1:-}" = test ]; then
  go test -count=1 ./...
fi
echo "built $(pwd)/bin/rwq-adapter"
