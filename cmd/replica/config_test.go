package main

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		hostname string
		check    func(*testing.T, *config)
		err      string
	}{
		{name: "defaults", check: func(t *testing.T, c *config) {
			if c.Workers != 1 || c.Process != 0 || c.ControllerListenAddr != ":2100" || len(c.ComputePeers) != 0 || c.LogLevel != slog.LevelInfo {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "env fallback", env: map[string]string{"TANDEM_WORKERS": "3", "TANDEM_LOG_LEVEL": "debug", "TANDEM_CONTROLLER_LISTEN_ADDR": ":9"},
			check: func(t *testing.T, c *config) {
				if c.Workers != 3 || c.LogLevel != slog.LevelDebug || c.ControllerListenAddr != ":9" {
					t.Errorf("env: %+v", c)
				}
			}},
		{name: "flag beats env", args: []string{"--workers", "2"}, env: map[string]string{"TANDEM_WORKERS": "3"},
			check: func(t *testing.T, c *config) {
				if c.Workers != 2 {
					t.Errorf("workers %d", c.Workers)
				}
			}},
		{name: "process from statefulset hostname", args: []string{"--compute-peers", "r-0.r:2102,r-1.r:2102"}, hostname: "cluster-u1-replica-1",
			check: func(t *testing.T, c *config) {
				if c.Process != 1 || c.ComputeListenAddr != ":2102" || !slices.Equal(c.ComputePeers, []string{"r-0.r:2102", "r-1.r:2102"}) {
					t.Errorf("peers: %+v", c)
				}
			}},
		{name: "explicit process beats hostname", args: []string{"--compute-peers", "a:1,b:2", "--process", "0"}, hostname: "x-1",
			check: func(t *testing.T, c *config) {
				if c.Process != 0 || c.ComputeListenAddr != ":1" {
					t.Errorf("process %+v", c)
				}
			}},
		{name: "hostname ignored for one process", hostname: "replica-3", check: func(t *testing.T, c *config) {
			if c.Process != 0 {
				t.Errorf("process %d", c.Process)
			}
		}},
		{name: "process out of range", args: []string{"--compute-peers", "a:1,b:2", "--process", "2"}, err: "out of range"},
		{name: "hostname ordinal out of range", args: []string{"--compute-peers", "a:1,b:2"}, hostname: "r-5", err: "out of range"},
		{name: "bad peer", args: []string{"--compute-peers", "a:1,b"}, err: "--compute-peers"},
		{name: "duplicate peer", args: []string{"--compute-peers", "a:1,a:1"}, err: "twice"},
		{name: "zero workers", args: []string{"--workers", "0"}, err: "--workers"},
		{name: "bad env", env: map[string]string{"TANDEM_WORKERS": "many"}, err: "TANDEM_WORKERS"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, err: "--log-level"},
		{name: "maintenance nice by default", check: func(t *testing.T, c *config) {
			if c.MaintenanceNice != DefaultMaintenanceNice {
				t.Errorf("maintenance nice %d, want %d", c.MaintenanceNice, DefaultMaintenanceNice)
			}
		}},
		{name: "maintenance nice off", env: map[string]string{"TANDEM_MAINTENANCE_NICE": "0"}, check: func(t *testing.T, c *config) {
			if c.MaintenanceNice != 0 {
				t.Errorf("maintenance nice %d, want 0", c.MaintenanceNice)
			}
		}},
		{name: "maintenance nice out of range", args: []string{"--maintenance-nice", "20"}, err: "--maintenance-nice"},
		{name: "negative maintenance nice", args: []string{"--maintenance-nice", "-1"}, err: "--maintenance-nice"},
		{name: "arenas on by default", check: func(t *testing.T, c *config) {
			if !c.OffHeapArrangements {
				t.Error("--offheap-arrangements off by default")
			}
		}},
		{name: "arenas off", env: map[string]string{"TANDEM_OFFHEAP_ARRANGEMENTS": "false"}, check: func(t *testing.T, c *config) {
			if c.OffHeapArrangements {
				t.Error("TANDEM_OFFHEAP_ARRANGEMENTS=false left arenas on")
			}
		}},
		{name: "profiles off by default", check: func(t *testing.T, c *config) {
			if c.PprofListenAddr != "" {
				t.Errorf("pprof on by default: %q", c.PprofListenAddr)
			}
		}},
		{name: "profiles on loopback", args: []string{"--pprof-listen-addr", "127.0.0.1:6060"}, check: func(t *testing.T, c *config) {
			if c.PprofListenAddr != "127.0.0.1:6060" {
				t.Errorf("pprof %q", c.PprofListenAddr)
			}
		}},
		{name: "profiles on every interface refused", args: []string{"--pprof-listen-addr", ":6060"}, err: "loopback only"},
		{name: "profiles on a pod IP refused", env: map[string]string{"TANDEM_PPROF_LISTEN_ADDR": "10.0.0.5:6060"}, err: "loopback only"},
		{name: "interactive peers must match processes", args: []string{"--compute-peers", "a:1,b:2", "--process", "0", "--interactive-peers", "a:3"}, err: "both runtimes must span the same processes"},
		{name: "one-process interactive", args: []string{"--interactive-peers", "a:7"}, check: func(t *testing.T, c *config) {
			if c.InteractiveListenAddr != ":7" || len(c.InteractivePeers) != 1 {
				t.Fatalf("interactive listen %q peers %v", c.InteractiveListenAddr, c.InteractivePeers)
			}
		}},
		{name: "two-process interactive", args: []string{"--compute-peers", "a:1,b:2", "--process", "1", "--interactive-peers", "a:3,b:4"}, check: func(t *testing.T, c *config) {
			if c.InteractiveListenAddr != ":4" {
				t.Fatalf("interactive listen %q", c.InteractiveListenAddr)
			}
		}},
		{name: "interactive peers validated", args: []string{"--interactive-peers", "a"}, err: "--interactive-peers"},
		{name: "stray argument", args: []string{"extra"}, err: "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			c, err := parseConfig(tt.args, getenv, tt.hostname, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
