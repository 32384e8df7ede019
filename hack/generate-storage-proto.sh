#!/usr/bin/env bash
# Regenerates the Go code of the table storage service
# (pkg/storage/storage.proto -> pkg/storage/storagepb), with the same protoc
# and plugin pins as hack/generate-proto.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if ! command -v protoc >/dev/null 2>&1; then
	echo "generate-storage-proto: installing protoc (Debian protobuf-compiler)" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null
fi

cache="${TANDEM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/protoc-plugins}"
mkdir -p "$cache"
GOFLAGS=-mod=mod go build -C hack/tools -o "$cache/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
GOFLAGS=-mod=mod go build -C hack/tools -o "$cache/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc

out=pkg/storage/storagepb
mkdir -p "$out"
PATH="$cache:$PATH" protoc \
	-I pkg/storage \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	pkg/storage/storage.proto
