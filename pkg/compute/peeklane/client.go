package peeklane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// HeaderKey is the gRPC header of the command stream in which a replica
// advertises its lane's address (see Resolve).
const HeaderKey = "tandem-peek-lane"

// Dialer opens the controller's end of lanes.
type Dialer struct {
	// TLS is the client configuration for lanes over TCP (mutual TLS under
	// the deployment's CA); nil dials TCP lanes in plaintext, as the
	// command stream does without internal TLS.
	TLS *tls.Config
}

// Client is the controller's end of one lane.
type Client struct{ c *conn }

// Dial connects to the lane advertised as addr (see Resolve) and attaches
// it to the command-stream connection of nonce. Every response read is
// handed to onResponse on the lane's reader goroutine, in order.
func (d Dialer) Dial(ctx context.Context, network, address, nonce string, onResponse func(*computepb.Response)) (*Client, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("dial peek lane %s: %w", address, err)
	}
	if network == "tcp" && d.TLS != nil {
		tc := tls.Client(nc, d.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("peek lane %s: TLS handshake: %w", address, err)
		}
		nc = tc
	}
	c := newConn(nc)
	c.send(&computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: nonce}}})
	go c.run(context.Background(),
		func() proto.Message { return new(computepb.Response) },
		func(m proto.Message) { onResponse(m.(*computepb.Response)) })
	return &Client{c: c}, nil
}

// Send queues cmd (a Peek or CancelPeek); false once the lane is down.
func (cl *Client) Send(cmd *computepb.Command) bool { return cl.c.send(cmd) }

// Done is closed once the lane is down.
func (cl *Client) Done() <-chan struct{} { return cl.c.done }

// Err is why the lane went down (nil when Close did it).
func (cl *Client) Err() error { return cl.c.cause() }

// Close takes the lane down.
func (cl *Client) Close() { cl.c.close(nil) }

// Resolve turns a replica's advertised lane address ("unix:/path" or
// "tcp:host:port", the host possibly empty) into a network and address to
// dial; an empty host is that of the replica's computectl address.
func Resolve(advertised, computectl string) (network, address string, err error) {
	network, address, ok := strings.Cut(advertised, ":")
	if !ok || address == "" {
		return "", "", fmt.Errorf("peek lane address %q: want unix:PATH or tcp:HOST:PORT", advertised)
	}
	switch network {
	case "unix":
		return network, address, nil
	case "tcp":
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return "", "", fmt.Errorf("peek lane address %q: %w", advertised, err)
		}
		if host == "" || host == "::" || host == "0.0.0.0" {
			if host, _, err = net.SplitHostPort(computectl); err != nil {
				return "", "", fmt.Errorf("computectl address %q: %w", computectl, err)
			}
		}
		return network, net.JoinHostPort(host, port), nil
	}
	return "", "", fmt.Errorf("peek lane address %q: unknown network %q", advertised, network)
}
