package tablesource

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/storage"
)

// EnvStorageAddr is the environment variable through which the process
// orchestrator tells replicas where the storage service listens.
const EnvStorageAddr = "TANDEM_STORAGE_ADDR"

// Dial returns a Factory reading from the storage service at addr, and the
// connection to close when the replica stops. The connection is lazy: a
// controller that is not up yet is retried by each source.
func Dial(addr string, log logr.Logger) (*Factory, io.Closer, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, nil, fmt.Errorf("dial storage %s: %w", addr, err)
	}
	return &Factory{Client: storage.NewClient(conn), Log: log}, conn, nil
}
