package main

import (
	"testing"
	"time"

	"github.com/tandemdb/tandem/operator/certs"
)

var defaultTLS = tlsConfig{caSecret: "tandem-internal-ca", certValidity: certs.DefaultLeafValidity}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr bool
	}{
		{
			name: "defaults",
			want: config{metricsAddr: ":8080", probeAddr: ":8081", leaderElect: true, logLevel: "info", tls: defaultTLS},
		},
		{
			name: "internal TLS",
			args: []string{"--internal-tls", "--internal-tls-namespace=ops", "--internal-tls-controller-secret=ctl-tls", "--internal-tls-cert-validity=24h"},
			want: config{metricsAddr: ":8080", probeAddr: ":8081", leaderElect: true, logLevel: "info",
				tls: tlsConfig{enabled: true, namespace: "ops", caSecret: "tandem-internal-ca", controllerSecret: "ctl-tls", certValidity: 24 * time.Hour}},
		},
		{
			name:    "internal TLS validity too short to renew",
			args:    []string{"--internal-tls", "--internal-tls-cert-validity=1m"},
			wantErr: true,
		},
		{
			name: "environment fallbacks",
			env:  map[string]string{"TANDEM_OPERATOR_LEADER_ELECT": "false", "TANDEM_OPERATOR_WATCH_NAMESPACES": "a,b"},
			want: config{metricsAddr: ":8080", probeAddr: ":8081", leaderElect: false, watchNamespaces: "a,b", logLevel: "info", tls: defaultTLS},
		},
		{
			name: "flags win over the environment",
			args: []string{"--log-level=debug"},
			env:  map[string]string{"TANDEM_OPERATOR_LOG_LEVEL": "error"},
			want: config{metricsAddr: ":8080", probeAddr: ":8081", leaderElect: true, logLevel: "debug", tls: defaultTLS},
		},
		{
			name:    "malformed environment value",
			env:     map[string]string{"TANDEM_OPERATOR_LEADER_ELECT": "maybe"},
			wantErr: true,
		},
		{
			name:    "unknown flag",
			args:    []string{"--no-such-flag"},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := parseFlags(tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("config = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewLogger(t *testing.T) {
	if _, err := newLogger("warn"); err != nil {
		t.Errorf("warn: %v", err)
	}
	if _, err := newLogger("loud"); err == nil {
		t.Error("accepted log level loud")
	}
}
