//go:build tools

// Package tools pins the versions of the protobuf code generators used by
// hack/generate-proto.sh. It is a separate module so that the generators'
// dependencies never enter the main module's go.mod.
package tools

import (
	_ "google.golang.org/grpc/cmd/protoc-gen-go-grpc"
	_ "google.golang.org/protobuf/cmd/protoc-gen-go"
)
