package proc

import (
	"strings"
	"testing"
)

func TestParseBanner(t *testing.T) {
	cases := []struct {
		name, banner, pg, http string
	}{
		{
			name: "controller banner",
			banner: "Tandem controller is running.\n" +
				"  SQL:      psql -h 127.0.0.1 -p 40123 -U tandem tandem\n" +
				"  HTTP:     http://127.0.0.1:40124/api/status  (also /healthz, /readyz, /metrics)\n" +
				"Press Ctrl-C to stop.\nlater output\n",
			pg: "127.0.0.1:40123", http: "127.0.0.1:40124",
		},
		{name: "no banner", banner: "panic: boom\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseBanner(strings.NewReader(tc.banner))
			if got[0] != tc.pg || got[1] != tc.http {
				t.Fatalf("parsed %q, want pgwire %q http %q", got, tc.pg, tc.http)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		stat, comm string
		ppid       int
		ok         bool
	}{
		{"4242 (replica) S 4200 4200 4200 0 -1", "replica", 4200, true},
		{"7 (odd (name) here) R 1 7 7", "odd (name) here", 1, true},
		{"garbage", "", 0, false},
		{"9 (x)", "", 0, false},
	}
	for _, tc := range cases {
		comm, ppid, ok := parseStat(tc.stat)
		if ok != tc.ok || (ok && (comm != tc.comm || ppid != tc.ppid)) {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tc.stat, comm, ppid, ok, tc.comm, tc.ppid, tc.ok)
		}
	}
}
