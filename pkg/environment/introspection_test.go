package environment

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// query runs one statement and returns its rows as text.
func query(ctx context.Context, s *sql.Session, text string) ([]string, error) {
	res, err := s.ExecuteSQL(ctx, text)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res[len(res)-1].Rows {
		parts := make([]string, len(r))
		for i, d := range r {
			parts[i] = d.String()
		}
		out = append(out, strings.Join(parts, ","))
	}
	return out, nil
}

// eventually retries a query until check accepts its rows: introspection
// relations refresh every second.
func eventually(t *testing.T, s *sql.Session, text string, check func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rows, err := query(ctx, s, text)
		cancel()
		if err == nil && check(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			all, aerr := query(context.Background(), s, "SELECT * FROM introspection.arrangements")
			t.Logf("all arrangements: %q %v", all, aerr)
			t.Fatalf("%s: last rows %q, error %v", text, rows, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestIntrospectionThroughSQL(t *testing.T) {
	dir := t.TempDir()
	s := openStack(t, dir)
	defer dumpLogs(t, dir)
	defer func() {
		if t.Failed() {
			b, _ := json.MarshalIndent(s.ctl.Status(), "", " ")
			t.Logf("status: %s", b)
		}
	}()
	defer s.close()
	ctx := context.Background()
	sess := sql.NewEngine(s.env).NewSession("test")
	mustRun := func(text string) {
		t.Helper()
		if _, err := sess.ExecuteSQL(ctx, text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}

	items, err := s.env.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		if isIntrospection(it) {
			names = append(names, it.Name)
			want, _ := logging.Desc(logging.Relation(it.Name))
			if !slices.Equal(it.Desc.Names, want.Names) {
				t.Errorf("%s columns %v, want %v", it.Name, it.Desc.Names, want.Names)
			}
		}
	}
	slices.Sort(names)
	var want []string
	for _, r := range logging.Relations() {
		want = append(want, string(r))
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("introspection items %v, want %v", names, want)
	}

	// Tables need the storage service, which this stack does not serve:
	// index a load generator instead.
	mustRun("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '50ms', MAX CARDINALITY 3)")
	mustRun("CREATE INDEX t_k ON c (counter)")
	ix := ""
	items, _ = s.env.Items(ctx)
	for _, it := range items {
		if it.Name == "t_k" {
			ix = it.ID.String()
		}
	}
	if ix == "" {
		t.Fatal("index t_k not in the catalog")
	}

	// A replica that does not exist is a clear error, not a hang.
	mustRun("SET cluster_replica = 'nope'")
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = sess.ExecuteSQL(cctx, "SELECT * FROM introspection.arrangements")
	if sqlerr.Code(err) != sqlerr.UndefinedObject || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("read from a missing replica: %v (code %s), want an undefined-object error naming it", err, sqlerr.Code(err))
	}

	// Introspection relations are read-only and cannot feed maintained
	// results.
	mustRun("RESET cluster_replica")
	mustRun("CREATE VIEW arr AS SELECT id, records FROM introspection.arrangements")
	if _, err := sess.ExecuteSQL(ctx, "CREATE INDEX arr_idx ON arr (id)"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("index over introspection: %v, want %s", err, sqlerr.FeatureNotSupported)
	}
	// The replica reports its own arrangement of the index, holding the
	// counter's rows (summed over workers).
	mustRun("SET cluster_replica = 'r1'")
	eventually(t, sess, "SELECT id, sum(records) > 0 FROM introspection.arrangements WHERE id = '"+ix+"' GROUP BY id", func(rows []string) bool {
		return slices.Equal(rows, []string{ix + ",t"})
	})
	// A plain scan (read straight from the replica's index).
	eventually(t, sess, "SELECT * FROM introspection.arrangements", func(rows []string) bool {
		for _, r := range rows {
			if strings.HasPrefix(r, ix+",") {
				return true
			}
		}
		return false
	})
	eventually(t, sess, "SELECT id FROM introspection.hydration WHERE hydration_ms IS NOT NULL AND id = '"+ix+"'", func(rows []string) bool {
		return len(rows) > 0
	})
	eventually(t, sess, "SELECT count(*) FROM introspection.worker_steps", func(rows []string) bool {
		return len(rows) == 1 && rows[0] != "0"
	})

	// Without a replica named, any connected one answers.
	mustRun("RESET cluster_replica")
	eventually(t, sess, "SELECT id FROM introspection.frontiers WHERE id = '"+ix+"'", func(rows []string) bool {
		return len(rows) > 0
	})

	// With enable_compute_interactive_dataflows on, the one-shot reads
	// above (the GROUP BY) ran on the interactive runtime.
	if rts := checkRuntimes(t, s, DefaultReplica); testparams.Interactive(t) && rts["interactive"] == 0 {
		t.Fatalf("no peek ran on the interactive runtime: peeks by runtime %v", rts)
	}
}

// dumpLogs shows the replicas' logs of a failed test.
func dumpLogs(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s:\n%s", f, b)
	}
}

// TestIntrospectionIDsSurviveRestart checks that a cluster's introspection
// ids are durable (a replica that outlives the controller keeps the ids it
// was first given) and that a dropped cluster's ids are not reused.
func TestIntrospectionIDsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStack(t, dir)
	first := s.ctl.IntrospectionIDs(DefaultCluster)
	if len(first) != len(logging.Relations()) {
		t.Fatalf("ids %v, want one per relation", first)
	}
	if err := s.env.CreateCluster(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	other := s.ctl.IntrospectionIDs("other")
	for rel, id := range other {
		if first[rel] == id {
			t.Fatalf("clusters share introspection id %s", id)
		}
	}
	if err := s.env.DropCluster(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := s.env.CreateCluster(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	for rel, id := range s.ctl.IntrospectionIDs("other") {
		if other[rel] == id {
			t.Fatalf("re-created cluster reuses id %s of the dropped one", id)
		}
	}
	s.close()

	s = openStack(t, dir)
	defer s.close()
	if got := s.ctl.IntrospectionIDs(DefaultCluster); !maps.Equal(got, first) {
		t.Fatalf("after restart ids %v, want %v", got, first)
	}
}
