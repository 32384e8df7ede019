package sql_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// spillingFake is the fake backend with a spill directory of its own.
type spillingFake struct {
	*sqltest.Fake
	dir string
}

func (f spillingFake) SpillDirectory() string { return f.dir }

// TestMaxQueryMemory: under a max_query_memory far below the result, an
// ORDER BY still answers, in order, sorting on disk (its run files gone
// once the result is read), while a result that must be held whole (a
// cursor) fails with 53200 and the session goes on.
func TestMaxQueryMemory(t *testing.T) {
	f := spillingFake{Fake: sqltest.New(), dir: t.TempDir()}
	s := sql.NewEngine(f).NewSession("alice")
	run(t, s, "CREATE TABLE t (a bigint, b text)")
	var values []string
	for i := range 2000 {
		values = append(values, fmt.Sprintf("(%d, '%s')", (i*7919)%2000, strings.Repeat("x", 20)))
	}
	run(t, s, "INSERT INTO t VALUES "+strings.Join(values, ", "))
	run(t, s, "ALTER SYSTEM SET max_query_memory = 16384")
	f.StreamPeeks()
	s.EnableRowStreaming()
	ctx := context.Background()
	res, err := s.ExecuteSQL(ctx, "SELECT a FROM t ORDER BY a DESC OFFSET 10 LIMIT 1500")
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Iter == nil {
		t.Fatal("a sorted result over the memory limit was not streamed from its runs")
	}
	if es, _ := os.ReadDir(f.dir); len(es) == 0 {
		t.Fatal("no sorted run was spilled")
	}
	var got []int64
	for {
		d, ok, err := r.Iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, d[0].Int64())
	}
	r.Iter.Close()
	if len(got) != 1500 || got[0] != 1989 || !slices.IsSortedFunc(got, func(a, b int64) int { return int(b - a) }) {
		t.Fatalf("got %d rows starting %v", len(got), got[:min(3, len(got))])
	}
	if es, _ := os.ReadDir(f.dir); len(es) != 0 {
		t.Fatalf("%d run files left", len(es))
	}
	// A cursor holds its rows: over the limit it fails with 53200.
	if _, err := s.ExecuteSQL(ctx, "DECLARE c CURSOR FOR SELECT a, b FROM t"); sqlCode(err) != "53200" ||
		!strings.Contains(err.Error(), "max_query_memory") {
		t.Fatalf("cursor over the limit: %v, want 53200", err)
	}
	res, err = s.ExecuteSQL(ctx, "SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if err := res[0].Materialize(); err != nil {
		t.Fatal(err)
	}
	if rows := rowsText(res[0].Rows); !slices.Equal(rows, []string{"2000"}) {
		t.Fatalf("after the error: %v", rows)
	}
	run(t, s, "ALTER SYSTEM SET max_query_memory = 0")
	run(t, s, "DECLARE c CURSOR FOR SELECT a, b FROM t")
	if rows := run(t, s, "FETCH 3 c"); len(rows) != 3 {
		t.Fatalf("cursor without a limit fetched %v", rows)
	}
	if n := f.OpenPeeks(); n != 0 {
		t.Fatalf("%d peek results left open", n)
	}
}

func sqlCode(err error) string {
	if c, ok := err.(interface{ SQLState() string }); ok {
		return c.SQLState()
	}
	return ""
}
