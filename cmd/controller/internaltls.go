package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

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
	// authority is the CA in the data directory, nil when the files were
	// given (the operator rotates those).
	authority *internaltls.Authority
}

// issuedNames are the certificates the CA in the data directory issues.
var issuedNames = []string{"controller", "replica"}

// rotationCheck is how often the controller checks whether the CA in the
// data directory is due for rotation.
const rotationCheck = 24 * time.Hour

// internalTLSFiles are the controller's and the replicas' certificates:
// the given files (the operator's Secret on Kubernetes; replicas of the
// process orchestrator then share them), or certificates issued by the
// CA in the data directory, created on first start and rotated first when
// it is due (internaltls.RenewBefore).
func internalTLSFiles(cfg *config) (own, rep internaltls.Files, ca *internaltls.Authority, err error) {
	if cfg.InternalTLSFiles.Cert != "" {
		return cfg.InternalTLSFiles, cfg.InternalTLSFiles, nil, nil
	}
	ca, err = internaltls.EnsureAuthority(filepath.Join(cfg.DataDir, internalTLSDir))
	if err != nil {
		return own, rep, nil, err
	}
	if _, err := ca.RotateIfDue(time.Now()); err != nil {
		return own, rep, nil, err
	}
	if own, err = ca.Issue(issuedNames[0]); err != nil {
		return own, rep, nil, err
	}
	rep, err = ca.Issue(issuedNames[1])
	return own, rep, ca, err
}

// maintain rotates the CA in the data directory when it is due (checked
// daily) and whenever the controller receives SIGHUP, until ctx ends.
// Every process reads its files again at each handshake, so a rotation
// needs no restart (internaltls.Authority.Rotate). Without a CA in the
// data directory it returns at once.
func (t internalTLSSetup) maintain(ctx context.Context, log logr.Logger) {
	if t.authority == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(rotationCheck)
	defer tick.Stop()
	for {
		var err error
		rotated := false
		select {
		case <-ctx.Done():
			return
		case <-hup:
			rotated, err = true, t.authority.Rotate(issuedNames...)
		case now := <-tick.C:
			rotated, err = t.authority.RotateIfDue(now, issuedNames...)
		}
		switch {
		case err != nil:
			log.Error(err, "Rotating the internal CA failed; the previous one stays in use")
		case rotated:
			log.Info("Rotated the internal CA", "expires", t.authority.Expiry())
		}
	}
}

// setUpInternalTLS sets up the controller's side of the internal links
// from internalTLSFiles, which it reads again whenever they change;
// storage then refuses, and counts in tandem_internal_tls_refused_total,
// every peer without a certificate of that CA. Off, it changes nothing.
func setUpInternalTLS(cfg *config, reg prometheus.Registerer, log logr.Logger) (internalTLSSetup, error) {
	if !cfg.InternalTLS {
		return internalTLSSetup{}, nil
	}
	own, rep, ca, err := internalTLSFiles(cfg)
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
		authority: ca,
	}, nil
}
