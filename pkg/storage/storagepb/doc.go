// Package storagepb is the generated Go code of the table storage service
// (pkg/storage/storage.proto, by hack/generate-storage-proto.sh): the
// messages and the gRPC service through which replicas read tables and
// write materialized views. Only this doc.go is written by hand; everything
// else is regenerated, never edited.
package storagepb
