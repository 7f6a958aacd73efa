#!/usr/bin/env bash
# deploy/test-image.sh IMAGE: runs the apistack image as a user would and
# checks it: the image is under 45 MB and runs as a non-root user; every API
# answers on its port; `apistack conform` (from the image itself) passes
# against the container for each API; a stop and a start keep the data in
# the /data volume. .ci/run runs it after `make image`. Needs podman (and
# runc); on the CI machines podman runs containers with runc, cgroupfs and no
# default ulimits (.ci/containers.conf, unless CONTAINERS_CONF is set) and
# host networking, so the APIs bind loopback ports chosen here.
set -euo pipefail
image=${1:?usage: deploy/test-image.sh IMAGE}
command -v podman >/dev/null || { echo "test-image: podman is required" >&2; exit 1; }

work=$(mktemp -d)
name="apistack-image-test-$$"
volume="$name-data"
cleanup() {
  status=$?
  if [ $status -ne 0 ]; then
    echo "--- container log (last 60 lines)" >&2
    podman logs --tail 60 "$name" >&2 2>&1 || true
  fi
  podman rm -f -t 5 "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/.ci/containers.conf}"
step() { printf '%s test-image: %s\n' "$(date -u +%T)" "$*"; }

# The image: small, non-root, apistack as its entrypoint, serve --demo by default.
size=$(podman image inspect --format '{{.Size}}' "$image")
step "image $image: $size bytes ($((size / 1000000)) MB)"
# The static binary is nearly all of it (40 MB in this version; each API's
# spec, the console and the PDF library's tables are built in): the bound
# catches a change that pulls in far more, not the growth of a feature.
[ "$size" -lt 45000000 ] || { echo "test-image: the image is $size bytes, over 45 MB" >&2; exit 1; }
[ "$(podman image inspect --format '{{.Config.User}}' "$image")" = "10001:10001" ] || { echo "test-image: not the non-root user" >&2; exit 1; }
[ "$(podman image inspect --format '{{json .Config.Entrypoint}} {{json .Config.Cmd}}' "$image")" = '["/apistack"] ["serve","--demo"]' ] ||
  { echo "test-image: entrypoint or command changed" >&2; exit 1; }

# Ports below the ephemeral range, the same on every run of this script.
base=${TEST_IMAGE_PORT_BASE:-27080}
pam=$((base + 1)) fax=$((base + 2)) storage=$((base + 3)) restaurant=$((base + 4)) admin=$((base + 9))
ports=("$pam" "$fax" "$storage" "$restaurant" "$admin")

podman volume create "$volume" >/dev/null
run_server() {
  # Every listener on loopback: the stack is local. The fax checks' receiver
  # is on this machine's loopback too, hence the private destinations.
  podman run -d --name "$name" --network host -v "$volume:/data" \
    -e APISTACK_PAM_ADDR=127.0.0.1:$pam -e APISTACK_FAX_ADDR=127.0.0.1:$fax \
    -e APISTACK_STORAGE_ADDR=127.0.0.1:$storage -e APISTACK_RESTAURANT_ADDR=127.0.0.1:$restaurant \
    -e APISTACK_ADMIN_ADDR=127.0.0.1:$admin -e APISTACK_FAX_STEP_INTERVAL=100ms \
    -e APISTACK_FAX_ALLOW_PRIVATE_DESTINATIONS=true \
    "$image" >/dev/null
}
wait_ready() {
  for port in "${ports[@]}"; do
    for i in $(seq 1 300); do
      if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then
        break
      fi
      if [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then
        echo "test-image: the container exited" >&2; exit 1
      fi
      [ "$i" -lt 300 ] || { echo "test-image: port $port not ready after 60 s" >&2; exit 1; }
      sleep 0.2
    done
  done
}
# apistack run from the image beside the server, on the same volume.
apistack() { podman run --rm --network host -v "$volume:/data" "$image" "$@"; }

step "start"
t0=$(date +%s)
run_server
wait_ready
step "every port ready in $(( $(date +%s) - t0 )) s"

# The image holds the CA certificates and the user's passwd entry.
files=$(podman export "$name" | tar -t)
for f in apistack etc/ssl/certs/ca-certificates.crt etc/passwd etc/group; do
  grep -qx "$f" <<<"$files" || { echo "test-image: $f missing from the image" >&2; exit 1; }
done

# The process runs as the image's user and the volume's files are its own.
uid=$(podman top "$name" huser | tail -n 1 | tr -d ' ')
[ "$uid" = 10001 ] || { echo "test-image: the server runs as uid $uid, not 10001" >&2; exit 1; }
mnt=$(podman volume inspect --format '{{.Mountpoint}}' "$volume")
[ "$(stat -c '%u %a' "$mnt/demo-credentials.json")" = "10001 600" ] || { echo "test-image: credentials file not the user's, 0600" >&2; exit 1; }

# Every API answers: health, spec and docs on each port, then the
# conformance suite of each API against the container.
for port in "${ports[@]}"; do
  for path in /healthz /openapi.yaml /docs/; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$path")
    [ "$code" = 200 ] || { echo "test-image: GET :$port$path answered $code" >&2; exit 1; }
  done
done
for api in pam fax storage restaurant; do
  step "conform --api $api"
  apistack conform --api "$api" --credentials /data/demo-credentials.json
done

# A restart keeps the data: a team created before, the demo's key and
# credentials, the lifecycle the conformance run restored.
apistack admin create-team kept-across-restarts >/dev/null
before=$(sha256sum "$mnt/demo-credentials.json" | cut -d' ' -f1)
step "stop (SIGTERM) and start again"
podman stop -t 20 "$name" >/dev/null
podman start "$name" >/dev/null
wait_ready
apistack admin get-team kept-across-restarts | grep -q '"kept-across-restarts"' ||
  { echo "test-image: the team created before the restart is gone" >&2; exit 1; }
[ "$(sha256sum "$mnt/demo-credentials.json" | cut -d' ' -f1)" = "$before" ] ||
  { echo "test-image: the demo credentials changed across a restart" >&2; exit 1; }
apistack conform --api pam --credentials /data/demo-credentials.json >/dev/null

# The container image guide's block, pasted as written (it uses the default
# ports and the name apistack): the sh fence between <!-- image-run --> and
# <!-- /image-run --> in docs/container-image.md.
step "docs/container-image.md's image-run block, pasted"
block=$(awk '$0 == "<!-- image-run -->" {inside=1; next} $0 == "<!-- /image-run -->" {exit} inside && !/^```/ {print}' "$root/docs/container-image.md")
[ -n "$block" ] || { echo "test-image: no image-run block in docs/container-image.md" >&2; exit 1; }
out=$(cd "$root" && IMAGE= bash -euo pipefail -c "$block" 2>&1) || { echo "$out" >&2; exit 1; }
grep -q 'apistack is running with demo tenants' <<<"$out" || { echo "test-image: the guide's podman logs shows no banner: $out" >&2; exit 1; }
grep -q 'pam/token-exchange *PASS' <<<"$out" || { echo "test-image: the guide's conform line did not pass: $out" >&2; exit 1; }
grep -q '"status":"ready"' <<<"$out" || { echo "test-image: the guide's readyz line did not answer ready: $out" >&2; exit 1; }
podman volume rm -f apistack-data >/dev/null
step "passed: image $((size / 1000000)) MB, every API conforms, data kept across a restart"
