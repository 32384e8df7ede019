package main

import (
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

// internalTLSDir holds the deployment's internal CA and certificates,
// inside the data directory.
const internalTLSDir = "internal-tls"

// internalTLSSetup is what --internal-tls changes: the storage server's
// options, how replicas are dialled, and the environment replica
// processes get (their certificate's files, as TANDEM_INTERNAL_TLS_*).
type internalTLSSetup struct {
	storageOptions []grpc.ServerOption
	dialer         controller.Dialer
	replicaEnv     []string
}

// internalTLSFiles are the controller's and the replicas' certificates:
// the given files (the operator's Secret on Kubernetes; replicas of the
// process orchestrator then share them), or certificates issued by the
// CA in the data directory, created on first start.
func internalTLSFiles(cfg *config) (own, rep internaltls.Files, err error) {
	if cfg.InternalTLSFiles.Cert != "" {
		return cfg.InternalTLSFiles, cfg.InternalTLSFiles, nil
	}
	ca, err := internaltls.EnsureAuthority(filepath.Join(cfg.DataDir, internalTLSDir))
	if err != nil {
		return own, rep, err
	}
	if own, err = ca.Issue("controller"); err != nil {
		return own, rep, err
	}
	rep, err = ca.Issue("replica")
	return own, rep, err
}

// setUpInternalTLS sets up the controller's side of the internal links
// from internalTLSFiles, which it reads again whenever they change;
// storage then refuses, and counts in tandem_internal_tls_refused_total,
// every peer without a certificate of that CA. Off, it changes nothing.
func setUpInternalTLS(cfg *config, reg prometheus.Registerer, log logr.Logger) (internalTLSSetup, error) {
	if !cfg.InternalTLS {
		return internalTLSSetup{}, nil
	}
	own, rep, err := internalTLSFiles(cfg)
	if err != nil {
		return internalTLSSetup{}, err
	}
	scfg, err := internaltls.ServerConfig(own)
	if err != nil {
		return internalTLSSetup{}, err
	}
	ccfg, err := internaltls.ClientConfig(own)
	if err != nil {
		return internalTLSSetup{}, err
	}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tandem_internal_tls_refused_total",
		Help: "Connections to an internal endpoint refused because the peer did not present a certificate of the deployment's CA (or spoke no TLS).",
	}, []string{"endpoint"})
	reg.MustRegister(refused)
	storageRefused := refused.WithLabelValues("storage")
	creds := internaltls.Credentials(scfg, func(err error) {
		storageRefused.Inc()
		log.Info("Refused a storage connection without the deployment's certificate", "err", err.Error())
	})
	return internalTLSSetup{
		storageOptions: []grpc.ServerOption{grpc.Creds(creds)},
		dialer:         controller.GRPCDialer{TLS: ccfg},
		replicaEnv: []string{"TANDEM_INTERNAL_TLS_CA=" + rep.CA, "TANDEM_INTERNAL_TLS_CERT=" + rep.Cert,
			"TANDEM_INTERNAL_TLS_KEY=" + rep.Key},
	}, nil
}
