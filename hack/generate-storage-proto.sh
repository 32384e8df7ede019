#!/usr/bin/env bash
# Regenerates the Go code of the table storage service
# (pkg/storage/storage.proto -> pkg/storage/storagepb), with the same protoc
# and plugin pins as the compute protocol: hack/generate-proto.sh does the work.
# Usage: hack/generate-storage-proto.sh [OUT_DIR]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/generate-proto.sh" --proto pkg/storage/storage.proto "$@"
