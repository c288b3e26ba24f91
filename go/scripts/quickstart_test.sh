#!/usr/bin/env bash
# The README quickstart, as a Go user outside this repository would follow it: an empty module in
# a temporary directory that requires github.com/rwq-protocol/rwq/go, pointed at this checkout
# with `go mod edit -replace`, holding the README's quickstart files (extracted from
# go/README.md, so the README cannot drift from what runs), built with the go-redis version of
# our go.sum; then the producer and the worker (-burst) run to completion against a redis-server
# this script starts on a free port, and the queue must be empty; then the statistics example
# must count its 3 adds and 3 completions; then the scheduler runs for 2.5 s and must have fired
# 2 or 3 slots of its 1 s schedule. Bounded: 120 s at most.
set -euo pipefail
module_dir=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
command -v redis-server >/dev/null || { echo "quickstart_test: redis-server is required" >&2; exit 1; }

work=$(mktemp -d)
redis_pid=
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
redis-cli -p "$port" ping >/dev/null

app="$work/app"
mkdir -p "$app"
# Every ```go block after a `<!-- quickstart: PATH -->` line of the README becomes that file.
awk -v app="$app" '
  /^<!-- quickstart: .* -->$/ { file = app "/" $3; next }
  file != "" && /^```go$/ { writing = 1; system("mkdir -p \"$(dirname \"" file "\")\""); next }
  writing && /^```$/ { writing = 0; close(file); file = ""; next }
  writing { print > file }
' "$module_dir/README.md"
test -s "$app/producer/main.go" && test -s "$app/worker/main.go" && test -s "$app/stats/main.go" && test -s "$app/scheduler/main.go"

cd "$app"
export GOFLAGS=-mod=mod GOWORK=off
go mod init example.com/quickstart >/dev/null 2>&1
go mod edit -require=github.com/rwq-protocol/rwq/go@v0.0.0 -replace=github.com/rwq-protocol/rwq/go="$module_dir"
# The same go-redis our module is tested with (its go.sum), fetched through the module proxy.
go mod edit -require="$(cd "$module_dir" && go list -m -f '{{.Path}}@{{.Version}}' github.com/redis/go-redis/v9)"
timeout 120 go mod tidy
timeout 120 go vet ./...

export REDIS_URL="redis://127.0.0.1:$port"
produced=$(timeout 60 go run ./producer)
[ "$produced" = "added 10 emails" ] || { echo "quickstart_test: producer said: $produced" >&2; exit 1; }
worked=$(timeout 60 go run ./worker -burst 2>"$work/worker.log")
if [ "$worked" != "sent 10 emails" ]; then
  echo "quickstart_test: worker said: $worked" >&2
  cat "$work/worker.log" >&2
  exit 1
fi
left=$(redis-cli -p "$port" eval "return {redis.call('LLEN', KEYS[1]), redis.call('LLEN', KEYS[2])}" 2 emails:queue emails:processing | tr '\n' ' ')
[ "$left" = "0 0 " ] || { echo "quickstart_test: queue and processing lists hold $left" >&2; exit 1; }
grep -q "sending welcome-10 to user 10" "$work/worker.log"
stats=$(timeout 60 go run ./stats)
[ "$stats" = "added 3, completed 3; 0.00 completed/s over the last 5 minutes" ] || { echo "quickstart_test: stats said: $stats" >&2; exit 1; }
scheduled=$(timeout 60 go run ./scheduler -for 2.5s 2>"$work/scheduler.log")
case "$scheduled" in
  "2 items queued" | "3 items queued") ;;
  *) echo "quickstart_test: scheduler said: $scheduled" >&2; cat "$work/scheduler.log" >&2; exit 1 ;;
esac
pings=$(redis-cli -p "$port" lrange reports:queue 0 -1 | grep -c '^ping@')
[ "$pings" = "${scheduled%% *}" ] || { echo "quickstart_test: reports:queue holds $pings pings" >&2; exit 1; }
echo "quickstart_test: ok (producer added 10, worker sent 10, queue empty; stats counted 3 and 3; scheduler fired $pings slots)"
