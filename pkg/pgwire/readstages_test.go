package pgwire

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/readtrace"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// replicaBackend is the fake backend with its reads timed as the compute
// controller times them (the replica stage).
type replicaBackend struct{ *sqltest.Fake }

func (b replicaBackend) Peek(ctx context.Context, req sql.PeekRequest) (sql.PeekRows, error) {
	start := time.Now()
	defer readtrace.Observe(ctx, readtrace.Replica, start)
	return b.Fake.Peek(ctx, req)
}

type traces struct {
	mu  sync.Mutex
	got []*readtrace.Trace
}

func (r *traces) Record(t *readtrace.Trace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, t)
}

// TestReadRecordsFrontDoorStagesOnce: a SELECT reading a table, through
// the simple and the extended protocol, is recorded once, with the pgwire,
// planning, replica and response stages once each; statements that read
// nothing from a replica (DDL, writes, SELECT of a constant) are not
// recorded.
func TestReadRecordsFrontDoorStagesOnce(t *testing.T) {
	rec := &traces{}
	addr := startServerOn(t, replicaBackend{sqltest.New()}, Config{ReadStages: rec})
	c := connect(t, addr, "")
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (a int)", "INSERT INTO t VALUES (1), (2)", "SELECT 1"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if len(rec.got) != 0 {
		t.Fatalf("%d statements recorded before any read, want 0", len(rec.got))
	}
	for _, mode := range []string{"simple", "extended"} {
		rec.mu.Lock()
		rec.got = nil
		rec.mu.Unlock()
		var n int
		var err error
		if mode == "simple" {
			_, err = c.Exec(ctx, "SELECT a FROM t")
		} else {
			err = c.QueryRow(ctx, "SELECT count(*) FROM t WHERE a > $1", 0).Scan(&n)
		}
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		rec.mu.Lock()
		if len(rec.got) != 1 {
			t.Fatalf("%s: %d reads recorded, want 1", mode, len(rec.got))
		}
		tr := rec.got[0]
		rec.mu.Unlock()
		for _, s := range readtrace.Stages() {
			want := 0
			switch s {
			case readtrace.PgWire, readtrace.Planning, readtrace.Replica, readtrace.Response:
				want = 1
			}
			if got := tr.Count(s); got != want {
				t.Errorf("%s: stage %s recorded %d times, want %d", mode, s, got, want)
			}
		}
	}
}
