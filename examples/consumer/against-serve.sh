#!/bin/sh
# Runs the example consumer's tests against a running apistack: builds
# `apistack`, starts `apistack serve --demo` on free loopback ports in a
# temporary directory, waits until it answers, runs the tests with
# APISTACK_URL and APISTACK_SANDBOX_TOKEN from its demo-credentials.json
# (each test then runs on a sandbox of it: apistacktest.Connect), and stops
# it. `make test` runs it after the in-process run. Needs curl and jq.
set -eu
GO=${GO:-go}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
(cd "$root" && "$GO" build -o "$dir/apistack" ./servers/cmd/apistack)
mkdir "$dir/data"
"$dir/apistack" serve --demo --data-dir "$dir/data" --pam-addr 127.0.0.1:0 --fax-addr 127.0.0.1:0 \
	--storage-addr 127.0.0.1:0 --restaurant-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 >"$dir/serve.log" 2>&1 &
pid=$!
creds="$dir/data/demo-credentials.json"
tries=0
until [ -s "$creds" ] && url=$(jq -er .sandboxes.base_url "$creds" 2>/dev/null) && curl -fsS -o /dev/null "$url/healthz" 2>/dev/null; do
	tries=$((tries + 1))
	if [ "$tries" -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "apistack serve did not become ready:" >&2
		cat "$dir/serve.log" >&2
		exit 1
	fi
	sleep 0.1
done
token=$(jq -er .sandboxes.token "$creds")
cd "$root/examples/consumer"
APISTACK_URL=$url APISTACK_SANDBOX_TOKEN=$token GOFLAGS=-mod=readonly "$GO" test -race -count=1 -timeout 5m ./...
