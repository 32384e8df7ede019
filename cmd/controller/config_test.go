package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
)

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(*config) bool
		wantErr error
	}{
		{name: "defaults", check: func(c *config) bool {
			return c.DataDir == "data" && c.PgwireListenAddr == "127.0.0.1:6875" && c.HTTPListenAddr == "127.0.0.1:6876" && c.Orchestrator == "process" && c.LogLevel == slog.LevelInfo && c.PprofListenAddr == ""
		}},
		{name: "env fallback", env: map[string]string{"TANDEM_DATA_DIR": "/tmp/x", "TANDEM_LOG_LEVEL": "debug"}, check: func(c *config) bool {
			return c.DataDir == "/tmp/x" && c.LogLevel == slog.LevelDebug
		}},
		{name: "flag beats env", args: []string{"--data-dir=/a"}, env: map[string]string{"TANDEM_DATA_DIR": "/b"}, check: func(c *config) bool { return c.DataDir == "/a" }},
		{name: "kubernetes from env, namespace from the service account", args: []string{"--orchestrator=kubernetes"},
			env: map[string]string{"TANDEM_REPLICA_IMAGE": "tandem/tandem:1", "TANDEM_REPLICA_IMAGE_PULL_POLICY": "Never"},
			check: func(c *config) bool {
				k := c.Kubernetes
				return c.Orchestrator == "kubernetes" && k.Namespace == "tandem-sa" && k.Kubeconfig == "" &&
					k.ReplicaImage == "tandem/tandem:1" && k.ReplicaImagePullPolicy == "Never" && k.ControllerName == "tandem-controller"
			}},
		{name: "kubernetes flags", args: []string{"--orchestrator=kubernetes", "--kubernetes-namespace=prod", "--kubeconfig=/k",
			"--replica-image=img", "--kubernetes-controller-name=env-a"},
			check: func(c *config) bool {
				k := c.Kubernetes
				return k.Namespace == "prod" && k.Kubeconfig == "/k" && k.ReplicaImage == "img" && k.ReplicaImagePullPolicy == "" && k.ControllerName == "env-a"
			}},
		{name: "kubernetes needs an image", args: []string{"--orchestrator=kubernetes", "--kubernetes-namespace=prod"}},
		{name: "kubernetes bad pull policy", args: []string{"--orchestrator=kubernetes", "--replica-image=i", "--replica-image-pull-policy=Sometimes"}},
		{name: "kubernetes bad namespace", args: []string{"--orchestrator=kubernetes", "--replica-image=i", "--kubernetes-namespace=Prod_1"}},
		{name: "kubernetes flags ignored by process", args: []string{"--replica-image-pull-policy=Sometimes"}, check: func(c *config) bool { return c.Orchestrator == "process" }},
		{name: "unknown orchestrator", args: []string{"--orchestrator=nomad"}},
		{name: "bad log level", args: []string{"--log-level=loud"}},
		{name: "stray argument", args: []string{"x"}},
		{name: "profiles on loopback", args: []string{"--pprof-listen-addr=127.0.0.1:6060"}, check: func(c *config) bool { return c.PprofListenAddr == "127.0.0.1:6060" }},
		{name: "profiles on every interface refused", args: []string{"--pprof-listen-addr=:6060"}},
		{name: "profiles on a pod IP refused", env: map[string]string{"TANDEM_PPROF_LISTEN_ADDR": "10.1.2.3:6060"}},
		{name: "no password: loopback only", check: func(c *config) bool {
			return c.FrontDoor.SuperuserPassword == "" && c.FrontDoor.Superuser == "tandem" && c.FrontDoor.TLSCert == ""
		}},
		{name: "password from the environment", env: map[string]string{"TANDEM_SUPERUSER_PASSWORD": "pw"}, check: func(c *config) bool {
			return c.FrontDoor.SuperuserPassword == "pw"
		}},
		{name: "password file beats the environment", args: []string{"--superuser-password-file=/run/secrets/pw"},
			env: map[string]string{"TANDEM_SUPERUSER_PASSWORD": "env"}, check: func(c *config) bool {
				return c.FrontDoor.SuperuserPassword == "from-file"
			}},
		{name: "empty password file", args: []string{"--superuser-password-file=/run/secrets/empty"}},
		{name: "missing password file", args: []string{"--superuser-password-file=/nope"}},
		{name: "tls cert without key", args: []string{"--tls-cert=/c.pem"}},
		{name: "require tls without cert", args: []string{"--require-tls"}},
		{name: "internal TLS: generated CA with the process orchestrator", check: func(c *config) bool {
			return c.InternalTLS && c.InternalTLSFiles.Cert == ""
		}},
		{name: "internal TLS: off by default on kubernetes", args: []string{"--orchestrator=kubernetes", "--replica-image=i"},
			check: func(c *config) bool { return !c.InternalTLS }},
		{name: "internal TLS: on kubernetes needs files", args: []string{"--orchestrator=kubernetes", "--replica-image=i", "--internal-tls=on"}},
		{name: "internal TLS: operator's files on kubernetes", args: []string{"--orchestrator=kubernetes", "--replica-image=i"},
			env: map[string]string{"TANDEM_INTERNAL_TLS_CA": "/t/ca.crt", "TANDEM_INTERNAL_TLS_CERT": "/t/tls.crt", "TANDEM_INTERNAL_TLS_KEY": "/t/tls.key"},
			check: func(c *config) bool {
				f := c.InternalTLSFiles
				return c.InternalTLS && f.CA == "/t/ca.crt" && f.Cert == "/t/tls.crt" && f.Key == "/t/tls.key"
			}},
		{name: "internal TLS: files go together", args: []string{"--internal-tls-cert=/t/tls.crt"}},
		{name: "internal TLS: off contradicts files", args: []string{"--internal-tls=off", "--internal-tls-ca=/a", "--internal-tls-cert=/b", "--internal-tls-key=/c"}},
		{name: "internal TLS: bad mode", args: []string{"--internal-tls=maybe"}},
		{name: "tls flags", args: []string{"--tls-cert=/c.pem", "--tls-key=/k.pem", "--require-tls"}, check: func(c *config) bool {
			return c.FrontDoor.TLSCert == "/c.pem" && c.FrontDoor.TLSKey == "/k.pem" && c.FrontDoor.RequireTLS
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfigIn(tt.args, env(tt.env), io.Discard, func(path string) ([]byte, error) {
				switch path {
				case serviceAccountNamespace:
					return []byte("tandem-sa\n"), nil
				case "/run/secrets/pw":
					return []byte("from-file\n"), nil
				case "/run/secrets/empty":
					return []byte("\n"), nil
				}
				return nil, fmt.Errorf("unexpected read of %s", path)
			})
			if tt.check == nil {
				if err == nil {
					t.Fatal("accepted")
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg) {
				t.Fatalf("cfg %+v, err %v", cfg, err)
			}
		})
	}
}

func TestParseParamDefaults(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
		err  bool
	}{
		{"", map[string]string{}, false},
		{"enable_compute_interactive_dataflows=on", map[string]string{"enable_compute_interactive_dataflows": "on"}, false},
		{" a = 1 , b=2 ", map[string]string{"a": "1", "b": "2"}, false},
		{"novalue", nil, true},
		{"=x", nil, true},
	}
	for _, tt := range tests {
		got, err := parseParamDefaults(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("parseParamDefaults(%q) error %v", tt.in, err)
			continue
		}
		if !tt.err && fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseParamDefaults(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
