package main

import (
	"errors"
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
			return c.DataDir == "data" && c.PgwireListenAddr == "127.0.0.1:6875" && c.HTTPListenAddr == "127.0.0.1:6876" && c.Orchestrator == "process" && c.LogLevel == slog.LevelInfo
		}},
		{name: "env fallback", env: map[string]string{"TANDEM_DATA_DIR": "/tmp/x", "TANDEM_LOG_LEVEL": "debug"}, check: func(c *config) bool {
			return c.DataDir == "/tmp/x" && c.LogLevel == slog.LevelDebug
		}},
		{name: "flag beats env", args: []string{"--data-dir=/a"}, env: map[string]string{"TANDEM_DATA_DIR": "/b"}, check: func(c *config) bool { return c.DataDir == "/a" }},
		{name: "kubernetes not yet", args: []string{"--orchestrator=kubernetes"}, wantErr: errKubernetesUnsupported},
		{name: "unknown orchestrator", args: []string{"--orchestrator=nomad"}},
		{name: "bad log level", args: []string{"--log-level=loud"}},
		{name: "stray argument", args: []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.args, env(tt.env), io.Discard)
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
