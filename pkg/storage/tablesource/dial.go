package tablesource

import (
	"crypto/tls"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/storage"
)

// EnvStorageAddr is the environment variable through which the process
// orchestrator tells replicas where the storage service listens.
const EnvStorageAddr = "TANDEM_STORAGE_ADDR"

// DialStorage returns a client of the storage service at addr (tables are
// read through it, materialized views' sinks write through it) and the
// connection to close when the replica stops. The connection is lazy: a
// controller that is not up yet is retried by each caller. With tlsCfg the
// connection uses (mutual) TLS, otherwise plaintext.
func DialStorage(addr string, tlsCfg *tls.Config) (*storage.Client, io.Closer, error) {
	creds := insecure.NewCredentials()
	if tlsCfg != nil {
		creds = credentials.NewTLS(tlsCfg)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, nil, fmt.Errorf("dial storage %s: %w", addr, err)
	}
	return storage.NewClient(conn), conn, nil
}

// Dial returns a Factory reading from the storage service at addr, and the
// connection to close when the replica stops.
func Dial(addr string, log logr.Logger) (*Factory, io.Closer, error) {
	c, closer, err := DialStorage(addr, nil)
	if err != nil {
		return nil, nil, err
	}
	return &Factory{Client: c, Log: log}, closer, nil
}
