package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/mesh"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

func issued(t *testing.T) internaltls.Files {
	t.Helper()
	ca, err := internaltls.EnsureAuthority(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := ca.Issue("replica")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMeshMutualTLS: two processes with certificates of the deployment's
// CA connect their mesh over TLS; a process whose certificate another CA
// signed is refused, counted, and the mesh fails to form.
func TestMeshMutualTLS(t *testing.T) {
	right := issued(t)
	for _, tc := range []struct {
		name   string
		second internaltls.Files
		ok     bool
	}{
		{"same CA", right, true},
		{"another CA", issued(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peers := freeAddrs(t, 2)
			errs := make(chan error, 2)
			var refused atomic.Int64
			for p, files := range []internaltls.Files{right, tc.second} {
				go func() {
					cfg := &config{Process: p, Workers: 1, PeerConnectTimeout: 5 * time.Second, InternalTLS: files}
					_, closeMesh, err := connectMesh(context.Background(), cfg, peers, peers[p], func(error) {}, func() { refused.Add(1) }, logr.Discard())
					if err == nil {
						defer closeMesh()
					}
					errs <- err
				}()
			}
			e1, e2 := <-errs, <-errs
			if tc.ok && (e1 != nil || e2 != nil) {
				t.Fatalf("mesh under one CA: %v, %v", e1, e2)
			}
			if !tc.ok && !errors.Is(e1, mesh.ErrHandshake) && !errors.Is(e2, mesh.ErrHandshake) {
				t.Fatalf("mesh across CAs: %v, %v", e1, e2)
			}
			if got := refused.Load(); (got > 0) == tc.ok {
				t.Fatalf("%d refusals counted, want some: %v", got, !tc.ok)
			}
		})
	}
}
