package peeklane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Attach binds a new lane to the replica's command-stream connection of
// nonce. It returns recv, called for each command read from the lane in
// order, and detach, called once when the lane is down; or an error
// refusing the lane.
type Attach func(nonce string, lane *ServerLane) (recv func(*computepb.Command), detach func(), err error)

// ServerLane is the replica's end of one lane.
type ServerLane struct{ c *conn }

// Send queues r on the lane; false once the lane is down.
func (l *ServerLane) Send(r *computepb.Response) bool { return l.c.send(r) }

// Close takes the lane down.
func (l *ServerLane) Close() { l.c.close(nil) }

// ServeConfig authenticates lanes.
type ServeConfig struct {
	// TLS, when set, is the server configuration (mutual TLS: it must
	// require and verify client certificates).
	TLS *tls.Config
	// SameUser refuses a unix-socket peer running as another user than
	// this process.
	SameUser bool
	// OnRefused is told of every lane refused before attaching.
	OnRefused func(error)
}

// handshakeTimeout bounds a lane's authentication and Hello.
const handshakeTimeout = 10 * time.Second

// Serve accepts lanes on lis until ctx ends or lis fails.
func Serve(ctx context.Context, lis net.Listener, cfg ServeConfig, attach Attach) error {
	stop := context.AfterFunc(ctx, func() { lis.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		nc, err := lis.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept peek lane: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveLane(ctx, nc, cfg, attach); err != nil && cfg.OnRefused != nil {
				cfg.OnRefused(err)
			}
		}()
	}
}

// serveLane authenticates nc, reads its Hello and serves it; the error is
// a refusal before attaching.
func serveLane(ctx context.Context, nc net.Conn, cfg ServeConfig, attach Attach) error {
	if cfg.SameUser {
		if err := checkSameUser(nc); err != nil {
			nc.Close()
			return err
		}
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if cfg.TLS != nil {
		tc := tls.Server(nc, cfg.TLS)
		if err := tc.HandshakeContext(hctx); err != nil {
			nc.Close()
			return fmt.Errorf("peek lane TLS handshake: %w", err)
		}
		nc = tc
	}
	c := newConn(nc)
	nonce, err := readHello(hctx, c)
	if err != nil {
		nc.Close()
		return err
	}
	recv, detach, err := attach(nonce, &ServerLane{c: c})
	if err != nil {
		nc.Close()
		return fmt.Errorf("peek lane refused: %w", err)
	}
	defer detach()
	c.run(ctx,
		func() proto.Message { return new(computepb.Command) },
		func(m proto.Message) { recv(m.(*computepb.Command)) })
	return nil
}

// readHello reads the lane's first frame, which must be a Hello.
func readHello(ctx context.Context, c *conn) (string, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.nc.SetReadDeadline(dl)
		defer c.nc.SetReadDeadline(time.Time{})
	}
	var cmd computepb.Command
	if _, err := readFrame(c.r, nil, &cmd); err != nil {
		return "", fmt.Errorf("peek lane hello: %w", err)
	}
	h := cmd.GetHello()
	if h == nil || h.GetNonce() == "" {
		return "", errors.New("peek lane: the first frame must be a hello with a nonce")
	}
	return h.GetNonce(), nil
}

// ListenUnix listens on a socket in a new directory under dir (the
// system's temporary directory when empty) that only this user can enter.
// It returns the advertised address; cleanup removes the directory.
func ListenUnix(dir string) (lis net.Listener, advertised string, cleanup func(), err error) {
	d, err := os.MkdirTemp(dir, "tandem-peeklane-")
	if err != nil {
		return nil, "", nil, fmt.Errorf("peek lane directory: %w", err)
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.RemoveAll(d)
		return nil, "", nil, fmt.Errorf("peek lane directory: %w", err)
	}
	path := filepath.Join(d, "lane.sock")
	lis, err = net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(d)
		return nil, "", nil, fmt.Errorf("listen on peek lane socket: %w", err)
	}
	return lis, "unix:" + path, func() { lis.Close(); os.RemoveAll(d) }, nil
}

// ListenTCP listens on addr (HOST:PORT; port 0 lets the system choose)
// and returns the advertised address, tcp:HOST:PORT with the port bound.
// An empty host is advertised empty: the controller dials the host of the
// replica's computectl address (Resolve).
func ListenTCP(addr string) (net.Listener, string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("peek lane address %q: %w", addr, err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen for peek lanes: %w", err)
	}
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	return lis, "tcp:" + net.JoinHostPort(host, port), nil
}
