package flagenv

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantWorkers int
		wantAddr    string
		wantErr     string
	}{
		{name: "defaults", wantWorkers: 1, wantAddr: "a"},
		{name: "environment", env: map[string]string{"TANDEM_WORKERS": "4", "TANDEM_LISTEN_ADDR": "b"}, wantWorkers: 4, wantAddr: "b"},
		{name: "command line wins", args: []string{"--workers=2"}, env: map[string]string{"TANDEM_WORKERS": "4"}, wantWorkers: 2, wantAddr: "a"},
		{name: "bad environment values all reported", env: map[string]string{"TANDEM_WORKERS": "many", "TANDEM_VERBOSE": "maybe"},
			wantErr: `TANDEM_VERBOSE="maybe"|TANDEM_WORKERS="many"`},
		{name: "bad environment value named", env: map[string]string{"TANDEM_WORKERS": "many"}, wantErr: `TANDEM_WORKERS="many"`},
		{name: "positional argument", args: []string{"extra"}, wantErr: `unexpected arguments ["extra"]`},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			workers := fs.Int("workers", 1, "")
			addr := fs.String("listen-addr", "a", "")
			fs.Bool("verbose", false, "")
			err := Parse(fs, tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				for _, want := range strings.Split(tt.wantErr, "|") {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("error %v, want one containing %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *workers != tt.wantWorkers || *addr != tt.wantAddr {
				t.Errorf("workers %d addr %q, want %d %q", *workers, *addr, tt.wantWorkers, tt.wantAddr)
			}
		})
	}
}
