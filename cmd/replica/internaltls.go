package main

import (
	"crypto/tls"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/credentials"

	"github.com/tandemdb/tandem/pkg/compute/mesh"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

// internalClientTLS is the storage connection's TLS: mutual, under the
// deployment's CA, when --internal-tls-* are set; nil (plaintext) when not.
func internalClientTLS(cfg *config) (*tls.Config, error) {
	if cfg.InternalTLS.Cert == "" {
		return nil, nil
	}
	return internaltls.ClientConfig(cfg.InternalTLS)
}

// newRefusedCounter registers tandem_internal_tls_refused_total{endpoint}:
// "computectl" (the compute protocol port) and "mesh" (a peer process of
// the replica).
func newRefusedCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tandem_internal_tls_refused_total",
		Help: "Connections to an internal endpoint refused because the peer did not present a certificate of the deployment's CA (or spoke no TLS).",
	}, []string{"endpoint"})
	reg.MustRegister(refused)
	return refused
}

// internalServerCreds are the compute protocol port's credentials: a
// controller must present a certificate of the deployment's CA; every
// refused handshake is counted in refused{endpoint="computectl"} and
// logged.
func internalServerCreds(cfg *config, refused *prometheus.CounterVec, log logr.Logger) (credentials.TransportCredentials, error) {
	scfg, err := internaltls.ServerConfig(cfg.InternalTLS)
	if err != nil {
		return nil, err
	}
	c := refused.WithLabelValues("computectl")
	return internaltls.Credentials(scfg, func(err error) {
		c.Inc()
		log.Info("Refused a connection to the compute protocol port without the deployment's certificate", "err", err.Error())
	}), nil
}

// meshTLS makes the mesh between the replica's processes mutual TLS under
// the deployment's CA when --internal-tls-* are set; a refused peer is
// logged and passed to onRefused (which counts it as endpoint "mesh").
func meshTLS(cfg *config, m *mesh.Config, onRefused func(), log logr.Logger) error {
	if cfg.InternalTLS.Cert == "" {
		return nil
	}
	var err error
	if m.ServerTLS, err = internaltls.ServerConfig(cfg.InternalTLS); err != nil {
		return err
	}
	if m.ClientTLS, err = internaltls.ClientConfig(cfg.InternalTLS); err != nil {
		return err
	}
	m.OnRefused = func(err error) {
		if onRefused != nil {
			onRefused()
		}
		log.Info("Refused a mesh connection without the deployment's certificate", "err", err.Error())
	}
	return nil
}
