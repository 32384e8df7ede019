package controller

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Stream is one connection to one replica process.
type Stream interface {
	Send(*computepb.Command) error
	Recv() (*computepb.Response, error)
	// Close ends the connection and unblocks Recv.
	Close() error
}

// Dialer opens connections to replica processes.
type Dialer interface {
	Dial(ctx context.Context, addr string) (Stream, error)
}

// GRPCDialer dials a replica's computectl endpoint over gRPC: with mutual
// TLS when TLS is set, plaintext otherwise.
type GRPCDialer struct {
	TLS *tls.Config
}

// Dial implements Dialer.
func (d GRPCDialer) Dial(ctx context.Context, addr string) (Stream, error) {
	creds := insecure.NewCredentials()
	if d.TLS != nil {
		creds = credentials.NewTLS(d.TLS)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	// Fail the dial, not the stream, when the replica is not up yet.
	stop := context.AfterFunc(ctx, cancel)
	stream, err := computepb.NewComputeClient(conn).CommandStream(sctx, grpc.WaitForReady(true))
	stop()
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("open command stream to %s: %w", addr, err)
	}
	return &grpcStream{stream: stream, conn: conn, cancel: cancel}, nil
}

type grpcStream struct {
	stream grpc.BidiStreamingClient[computepb.Command, computepb.Response]
	conn   *grpc.ClientConn
	cancel context.CancelFunc
}

func (s *grpcStream) Send(c *computepb.Command) error    { return s.stream.Send(c) }
func (s *grpcStream) Recv() (*computepb.Response, error) { return s.stream.Recv() }
func (s *grpcStream) Close() error {
	s.cancel()
	return s.conn.Close()
}

// newUUID returns a random (version 4) UUID in canonical form.
//
// Every read takes one, so it is drawn from math/rand/v2's generator
// (ChaCha8, seeded by the system's entropy, per thread) rather than
// crypto/rand and fmt: uuids must be unique, not secret.
func newUUID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mrand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		const digits = "0123456789abcdef"
		out[j], out[j+1] = digits[c>>4], digits[c&0x0f]
		j += 2
	}
	return string(out[:])
}
