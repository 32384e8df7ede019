package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

func testCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "refused"})
}

func counted(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// freePort is a port nothing listens on at the time of the call.
func freePort(t *testing.T) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(freeAddrs(t, 1)[0])
	return port
}

// TestPeekLaneListenAddr: the tcp lane listens where --peek-lane-listen-addr
// says and advertises that port; an empty host is advertised empty, so the
// controller dials the computectl host; without the flag the system picks
// the port on --controller-listen-addr's host.
func TestPeekLaneListenAddr(t *testing.T) {
	port := freePort(t)
	for _, tc := range []struct {
		name, mode, listen, want, resolved string
	}{
		{"fixed port, any host", "tcp", ":" + port, "tcp::" + port, "127.0.0.1:" + port},
		{"fixed port, named host", "auto", "127.0.0.1:" + port, "tcp:127.0.0.1:" + port, "127.0.0.1:" + port},
		{"system-chosen port", "tcp", "", "tcp:127.0.0.1:", "127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config{ControllerListenAddr: "127.0.0.1:2100", PeekLane: tc.mode, PeekLaneListenAddr: tc.listen}
			if tc.mode == "auto" {
				// auto picks tcp only off loopback.
				cfg.ControllerListenAddr = "0.0.0.0:2100"
			}
			l, err := listenPeekLane(cfg, testCounter(), logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			if !strings.HasPrefix(l.advertised, tc.want) || (tc.listen == "" && l.advertised == tc.want+port) {
				t.Fatalf("advertised %q, want %q", l.advertised, tc.want)
			}
			network, addr, err := peeklane.Resolve(l.advertised, "127.0.0.1:2100")
			if err != nil || network != "tcp" || !strings.HasPrefix(addr, tc.resolved) {
				t.Fatalf("resolved to %s %s (%v), want tcp %s", network, addr, err, tc.resolved)
			}
			c, err := net.Dial(network, addr)
			if err != nil {
				t.Fatalf("dial the advertised lane: %v", err)
			}
			c.Close()
		})
	}
}

// TestPeekLaneFixedPortMutualTLS: on a fixed port the lane keeps mutual TLS
// when --internal-tls-* are set: a plaintext client is refused and counted,
// a client with the deployment's certificate gets its peek answered.
func TestPeekLaneFixedPortMutualTLS(t *testing.T) {
	files := issued(t)
	cfg := &config{ControllerListenAddr: "127.0.0.1:2100", PeekLane: "tcp", PeekLaneListenAddr: "127.0.0.1:" + freePort(t), InternalTLS: files}
	refused := testCounter()
	l, err := listenPeekLane(cfg, refused, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = peeklane.Serve(ctx, l.lis, l.cfg, echoPeeks)
	}()
	defer func() { cancel(); <-done }()
	_, addr, _ := peeklane.Resolve(l.advertised, cfg.ControllerListenAddr)

	if cl, err := (peeklane.Dialer{}).Dial(ctx, "tcp", addr, "n", func(*computepb.Response) {}); err == nil {
		defer cl.Close()
		cl.Send(peekCmd("plain"))
	}
	for deadline := time.Now().Add(10 * time.Second); counted(refused) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a plaintext lane on the fixed port was not refused")
		}
	}
	ccfg, err := internaltls.ClientConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	cl, err := peeklane.Dialer{TLS: ccfg}.Dial(ctx, "tcp", addr, "n", func(r *computepb.Response) { got <- r.GetPeekResponse().GetUuid() })
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.Send(peekCmd("u1"))
	select {
	case u := <-got:
		if u != "u1" {
			t.Fatalf("answered %q, want u1", u)
		}
	case <-cl.Done():
		t.Fatalf("the deployment's certificate was refused: %v", cl.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("no answer on the lane")
	}
}

func peekCmd(uuid string) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: uuid}}}
}

// echoPeeks attaches every lane and answers each peek with an empty
// response of its uuid.
func echoPeeks(_ string, l *peeklane.ServerLane) (func(*computepb.Command), func(), error) {
	return func(c *computepb.Command) {
		if p := c.GetPeek(); p != nil {
			l.Send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{Uuid: p.GetUuid()}}})
		}
	}, func() {}, nil
}

// TestPeekLaneListenAddrFlag: the flag is checked at parse time.
func TestPeekLaneListenAddrFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--peek-lane-listen-addr=:2102"}, ""},
		{[]string{"--peek-lane=tcp", "--peek-lane-listen-addr=10.0.0.1:2102"}, ""},
		{[]string{"--peek-lane=unix", "--peek-lane-listen-addr=:2102"}, "needs --peek-lane=tcp or auto"},
		{[]string{"--peek-lane=off", "--peek-lane-listen-addr=:2102"}, "needs --peek-lane=tcp or auto"},
		{[]string{"--peek-lane-listen-addr=2102"}, "missing port"},
		{[]string{"--peek-lane-listen-addr=:lane"}, "is not a number"},
		{[]string{"--peek-lane-listen-addr=:70000"}, "is not a number"},
	} {
		cfg, err := parseConfig(tc.args, func(string) string { return "" }, "", &strings.Builder{})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one with %q", tc.args, err, tc.wantErr)
		case err == nil && cfg.PeekLaneListenAddr != strings.TrimPrefix(tc.args[len(tc.args)-1], "--peek-lane-listen-addr="):
			t.Errorf("%v: PeekLaneListenAddr %q", tc.args, cfg.PeekLaneListenAddr)
		}
	}
}
