package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/internaltls"
)

// callCode makes one RPC of a method no server has and returns its code:
// Unimplemented means the connection was accepted, Unavailable that the
// handshake was refused.
func callCode(t *testing.T, addr string, creds credentials.TransportCredentials) codes.Code {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = conn.Invoke(ctx, "/tandem.Probe/Nothing", &emptyMsg{}, &emptyMsg{})
	return status.Code(err)
}

// emptyMsg is a message with no fields, for callCode.
type emptyMsg struct{}

func (*emptyMsg) Reset()         {}
func (*emptyMsg) String() string { return "" }
func (*emptyMsg) ProtoMessage()  {}

// refusedCount reads tandem_internal_tls_refused_total{endpoint} from a
// /metrics page.
func refusedCount(t *testing.T, metricsURL, endpoint string) int {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`tandem_internal_tls_refused_total\{endpoint="` + endpoint + `"\} (\d+)`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestInternalLinksNeedTheDeploymentCertificate: with the process
// orchestrator the controller generates a CA in its data directory and
// the replicas reach storage and the controller reaches them over mutual
// TLS (a table read works); a client speaking plaintext, or TLS without a
// client certificate, is refused by storage and by a replica's compute
// protocol port and counted, while a certificate of the deployment's CA
// gets through.
func TestInternalLinksNeedTheDeploymentCertificate(t *testing.T) {
	bin := buildBinaries(t)
	dataDir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	storageAddr := ln.Addr().String()
	ln.Close()
	rc := startController(t, bin, dataDir, "--storage-listen-addr="+storageAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := connectPG(ctx, t, rc)
	mustExec(ctx, t, conn, "CREATE TABLE t (a int)", "INSERT INTO t VALUES (1), (2)")
	if got := queryRows(ctx, t, conn, "SELECT sum(a) FROM t"); len(got) != 1 || got[0] != "3" {
		t.Fatalf("read over the internal links: %v", got)
	}

	resp, err := http.Get("http://" + rc.httpAddr + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Orchestrator []struct {
			Processes []struct{ ComputeCtlAddr, InternalHTTPAddr string }
		} `json:"orchestrator"`
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || len(st.Orchestrator) == 0 || len(st.Orchestrator[0].Processes) == 0 {
		t.Fatalf("status: %+v, %v", st, err)
	}
	replica := st.Orchestrator[0].Processes[0]

	ca, err := internaltls.EnsureAuthority(filepath.Join(dataDir, internalTLSDir))
	if err != nil {
		t.Fatal(err)
	}
	tester, err := ca.Issue("tester")
	if err != nil {
		t.Fatal(err)
	}
	right, err := internaltls.ClientConfig(tester)
	if err != nil {
		t.Fatal(err)
	}
	noCert := right.Clone()
	noCert.GetClientCertificate = nil
	for _, ep := range []struct{ name, addr, metrics string }{
		{"storage", storageAddr, "http://" + rc.httpAddr + "/metrics"},
		{"computectl", replica.ComputeCtlAddr, "http://" + replica.InternalHTTPAddr + "/metrics"},
	} {
		before := refusedCount(t, ep.metrics, ep.name)
		for _, c := range []struct {
			name  string
			creds credentials.TransportCredentials
			want  codes.Code
		}{
			{"plaintext", insecure.NewCredentials(), codes.Unavailable},
			{"TLS without a client certificate", credentials.NewTLS(noCert), codes.Unavailable},
			{"the deployment's certificate", credentials.NewTLS(right), codes.Unimplemented},
		} {
			if got := callCode(t, ep.addr, c.creds); got != c.want {
				t.Errorf("%s, %s: %v, want %v", ep.name, c.name, got, c.want)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for refusedCount(t, ep.metrics, ep.name) < before+2 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := refusedCount(t, ep.metrics, ep.name); n < before+2 {
			t.Errorf("%s counted %d refusals, want at least %d", ep.name, n, before+2)
		}
	}
	rotateOnHUP(ctx, t, rc, dataDir, conn, right, storageAddr, replica.ComputeCtlAddr)
}

// rotateOnHUP: SIGHUP rotates the CA in the data directory while
// everything runs: afterwards a certificate of the new authority is
// accepted by storage and by the replica (which read the new bundle
// without a restart), one of the previous authority still is, and SQL
// reads keep working on the open connection and on a new one.
func rotateOnHUP(ctx context.Context, t *testing.T, rc *runningController, dataDir string, conn *pgx.Conn,
	previous *tls.Config, addrs ...string) {
	t.Helper()
	dir := filepath.Join(dataDir, internalTLSDir)
	bundle := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, internaltls.CAFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := bundle()
	if err := rc.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for bytes.Count(bundle(), []byte("BEGIN CERTIFICATE")) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := bundle(); bytes.Equal(after, before) || bytes.Count(after, []byte("BEGIN CERTIFICATE")) != 2 {
		t.Fatalf("SIGHUP did not rotate the CA: bundle of %d certificates", bytes.Count(after, []byte("BEGIN CERTIFICATE")))
	}
	// The rotation writes the bundle, then the new key: until the key is
	// written the directory's signing authority is still the previous
	// one (its certificate is second in the bundle), and a certificate
	// issued now would not be of the new authority.
	newKeyWritten := func() bool {
		_, err := tls.LoadX509KeyPair(filepath.Join(dir, internaltls.CAFile), filepath.Join(dir, "ca.key"))
		return err == nil
	}
	for deadline := time.Now().Add(30 * time.Second); !newKeyWritten(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP rotated the CA bundle but not its key")
		}
	}
	ca, err := internaltls.EnsureAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ca.Issue("tester2")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := internaltls.ClientConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range addrs {
		for name, cfg := range map[string]*tls.Config{"new": fresh, "previous": previous} {
			if got := callCode(t, addr, credentials.NewTLS(cfg)); got != codes.Unimplemented {
				t.Errorf("%s after rotation, a certificate of the %s authority: %v", addr, name, got)
			}
		}
	}
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (3)")
	if got := queryRows(ctx, t, conn, "SELECT sum(a) FROM t"); len(got) != 1 || got[0] != "6" {
		t.Fatalf("read after rotation: %v", got)
	}
	conn2 := connectPG(ctx, t, rc)
	if got := queryRows(ctx, t, conn2, "SELECT count(*) FROM t"); len(got) != 1 || got[0] != "3" {
		t.Fatalf("read on a new connection after rotation: %v", got)
	}
}
