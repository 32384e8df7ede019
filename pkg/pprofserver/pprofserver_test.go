package pprofserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/go-logr/logr"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"localhost:0", true},
		{"127.0.0.2:1", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"[::]:6060", false},
		{"10.0.0.1:6060", false},
		{"example.com:6060", false},
		{"6060", false},
	} {
		if err := CheckAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
	}
}

func TestServeLoopbackOnly(t *testing.T) {
	if _, _, err := Serve(context.Background(), ":0"); err == nil {
		t.Fatal("Serve on every interface accepted")
	}
	addr, stop, err := Serve(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for path, want := range map[string]int{"/debug/pprof/": http.StatusOK, "/metrics": http.StatusNotFound} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestServeConfigured(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		wantErr bool
	}{
		{"", false},
		{"127.0.0.1:0", false},
		{"0.0.0.0:0", true},
	} {
		stop, err := ServeConfigured(context.Background(), tc.addr, logr.Discard())
		if (err != nil) != tc.wantErr {
			t.Fatalf("ServeConfigured(%q) error = %v, want error %v", tc.addr, err, tc.wantErr)
		}
		if err == nil {
			if stop == nil {
				t.Fatalf("ServeConfigured(%q) returned a nil stop", tc.addr)
			}
			stop()
		}
	}
}
