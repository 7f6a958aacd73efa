#!/bin/sh
# deploy/rootfs.sh DIR: lays out the image's file tree in DIR: the static
# apistack binary, the CA certificates (public media URLs over HTTPS), the
# non-root user's passwd and group entries, and the empty /data and /tmp.
# The Containerfile's Go stage and `make image` both run it, from the
# repository's root, so the two ways of building make the same image.
set -eu
dir=${1:?usage: deploy/rootfs.sh DIR}
go=${GO:-go}
rm -rf "$dir"
mkdir -p "$dir/etc/ssl/certs" "$dir/data" "$dir/tmp"
# No cgo: modernc.org/sqlite is pure Go, so the binary needs no libc.
CGO_ENABLED=0 "$go" build -trimpath -ldflags='-s -w' -o "$dir/apistack" ./servers/cmd/apistack
cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
echo 'apistack:x:10001:10001:apistack:/data:/nonexistent' > "$dir/etc/passwd"
echo 'apistack:x:10001:' > "$dir/etc/group"
