// Package computepb is the generated Go code of the compute protocol
// (pkg/compute/protocol/compute.proto, by hack/generate-proto.sh): the
// messages and the gRPC service between the compute controller and one
// replica process. Only this doc.go is written by hand; everything else is
// regenerated, never edited (make check-generate-proto compares).
package computepb
