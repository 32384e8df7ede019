#!/usr/bin/env bash
# Regenerates the Go code of the compute protocol
# (pkg/compute/protocol/{compute,plan}.proto -> pkg/compute/protocol/computepb),
# or of another .proto of the repository with --proto (hack/generate-storage-proto.sh).
# Usage: hack/generate-proto.sh [--proto FILE.proto] [OUT_DIR]
#
# protoc comes from Debian (installed here when missing); the Go plugins are
# built from the versions pinned in hack/tools/go.mod into a cache directory
# outside the repository, so the output depends only on files in the repo
# and on the Debian protoc release.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

protos=(pkg/compute/protocol/compute.proto pkg/compute/protocol/plan.proto)
default_out=pkg/compute/protocol/computepb
if [[ "${1:-}" == "--proto" ]]; then
	protos=("$2")
	default_out="$(dirname "$2")/$(basename "$2" .proto)pb"
	shift 2
fi

if ! command -v protoc >/dev/null 2>&1; then
	echo "generate-proto: installing protoc (Debian protobuf-compiler)" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null
fi

cache="${TANDEM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/protoc-plugins}"
mkdir -p "$cache"
# Rebuilding is cheap when the Go build cache is warm and guarantees the
# plugins match hack/tools/go.mod.
GOFLAGS=-mod=mod go build -C hack/tools -o "$cache/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
GOFLAGS=-mod=mod go build -C hack/tools -o "$cache/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc

# An optional argument redirects the output (make check-generate-proto
# generates into a scratch directory and compares).
out="${1:-$default_out}"
mkdir -p "$out"
PATH="$cache:$PATH" protoc \
	-I "$(dirname "${protos[0]}")" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	"${protos[@]}"
