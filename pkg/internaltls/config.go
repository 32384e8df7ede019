package internaltls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc/credentials"
)

// load reads the files' pair and authority pool.
func load(f Files) (tls.Certificate, *x509.CertPool, error) {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("internal TLS certificate: %w", err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("internal TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("internal TLS CA %s: no certificate", f.CA)
	}
	return pair, pool, nil
}

// ServerConfig is a server's configuration: it presents f's certificate
// and requires a client certificate signed by f's authority.
func ServerConfig(f Files) (*tls.Config, error) {
	pair, pool, err := load(f)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}, nil
}

// ClientConfig is a client's configuration: it presents f's certificate
// and verifies the server's against f's authority, for ServerName.
func ClientConfig(f Files) (*tls.Config, error) {
	pair, pool, err := load(f)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: ServerName,
		MinVersion: tls.VersionTLS13}, nil
}

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
