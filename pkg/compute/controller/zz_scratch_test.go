package controller_test

import (
	"context"
	"net/http"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

func TestZZScratch(t *testing.T) {
	e := newRealEnv(t, nil)
	e.replica("r1", 1, 2)
	e.replica("r2", 1, 2)
	e.waitFor("both connected", 30*time.Second, func() bool { return e.replicaStatus("r1").Connected && e.replicaStatus("r2").Connected })
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, 200000, start)); err != nil {
		t.Fatal(err)
	}
	oldPID := e.pid("r1", 0)
	syscall.Kill(oldPID, syscall.SIGKILL)
	t0 := time.Now()
	for i := 0; i < 1; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		p0 := time.Now()
		res, err := e.ctl.Peek(ctx, controller.PeekRequest{Cluster: "default", Target: "u1", LiteralKeys: [][]byte{row.Pack(row.Int64(42))}})
		cancel()
		t.Logf("at %v: peek took %v ts %d by %s err %v; r1 %+v r2 %+v", p0.Sub(t0), time.Since(p0), res.Timestamp, res.Replica, err, e.replicaStatus("r1"), e.replicaStatus("r2"))
		for _, c := range e.ctl.Status().Collections {
			if c.ID == "u1" {
				t.Logf("u1 %+v", c)
			}
		}
	}
	for i := 0; i < 60 && !(e.hydrated("r2", "u1") && e.hydrated("r1", "u1")); i++ {
		time.Sleep(2 * time.Second)
		for _, c := range e.ctl.Status().Collections {
			if c.ID == "u1" {
				t.Logf("at %v u1 %+v", time.Since(t0), c.Replicas)
			}
		}
	}
	st, _ := e.orch.Status(context.Background(), orchestrator.ReplicaID{Cluster: "default", Replica: "r2"})
	resp, err := http.Get("http://" + st.Processes[0].InternalHTTPAddr + "/metrics")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "peek") && !strings.Contains(l, "bucket") && !strings.HasPrefix(l, "#") {
				t.Log(l)
			}
		}
	}
}
