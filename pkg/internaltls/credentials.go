package internaltls

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"google.golang.org/grpc/credentials"
)

// Credentials are gRPC server transport credentials over cfg that call
// refused for every handshake that fails (a peer without the right
// certificate, or no TLS at all).
func Credentials(cfg *tls.Config, refused func(error)) credentials.TransportCredentials {
	return countingCreds{TransportCredentials: credentials.NewTLS(cfg), refused: refused}
}

type countingCreds struct {
	credentials.TransportCredentials
	refused func(error)
}

// ServerHandshake implements credentials.TransportCredentials.
func (c countingCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil && c.refused != nil && !errors.Is(err, context.Canceled) {
		c.refused(err)
	}
	return out, info, err
}

// Clone implements credentials.TransportCredentials.
func (c countingCreds) Clone() credentials.TransportCredentials {
	return countingCreds{TransportCredentials: c.TransportCredentials.Clone(), refused: c.refused}
}
