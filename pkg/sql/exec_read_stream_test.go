package sql_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestSelectStreaming: a streamed backend result of a SELECT without ORDER
// BY comes back as Result.Iter on a session with row streaming, with
// offset, limit and projection applied as rows are read and multiplicities
// expanded; with ORDER BY, without streaming on, or for a cursor, it is
// materialised. Every peek result is closed.
func TestSelectStreaming(t *testing.T) {
	s, f := newSession(t)
	run(t, s, "CREATE TABLE t (a bigint, b text)")
	for i := range 20 {
		run(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d, 'x%d'), (%d, 'x%d')", i%5, i%5, i%5, i%5))
	}
	f.StreamPeeks()
	ctx := context.Background()
	exec := func(q string) ([]string, string, bool) {
		t.Helper()
		res, err := s.ExecuteSQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		r := res[len(res)-1]
		streamed := r.Iter != nil
		if err := r.Materialize(); err != nil {
			t.Fatal(err)
		}
		return rowsText(r.Rows), r.Tag, streamed
	}
	for _, tc := range []struct {
		query    string
		streamOn bool
		streamed bool
		rows     int
	}{
		{query: "SELECT a FROM t", streamOn: false, streamed: false, rows: 40},
		{query: "SELECT a FROM t", streamOn: true, streamed: true, rows: 40},
		{query: "SELECT b FROM t LIMIT 7 OFFSET 30", streamOn: true, streamed: true, rows: 7},
		{query: "SELECT b FROM t LIMIT 7 OFFSET 38", streamOn: true, streamed: true, rows: 2},
		{query: "SELECT a FROM t ORDER BY a DESC LIMIT 3", streamOn: true, streamed: false, rows: 3},
	} {
		if tc.streamOn {
			s.EnableRowStreaming()
		}
		rows, tag, streamed := exec(tc.query)
		if streamed != tc.streamed || len(rows) != tc.rows || tag != fmt.Sprintf("SELECT %d", tc.rows) {
			t.Fatalf("%s (streaming %v): streamed %v, %d rows, tag %q; want streamed %v, %d rows",
				tc.query, tc.streamOn, streamed, len(rows), tag, tc.streamed, tc.rows)
		}
		if tc.query == "SELECT a FROM t ORDER BY a DESC LIMIT 3" && !slices.Equal(rows, []string{"4", "4", "4"}) {
			t.Fatalf("ordered rows %v", rows)
		}
	}
	// Without ORDER BY the same multiset as materialised.
	got, _, _ := exec("SELECT a, b FROM t")
	slices.Sort(got)
	if len(got) != 40 || got[0] != "0,x0" || got[39] != "4,x4" {
		t.Fatalf("streamed rows %v", got)
	}
	run(t, s, "DECLARE c CURSOR FOR SELECT a FROM t")
	if rows := run(t, s, "FETCH 5 c"); len(rows) != 5 {
		t.Fatalf("cursor over a streamed result fetched %v", rows)
	}
	run(t, s, "CLOSE c")
	if n := f.OpenPeeks(); n != 0 {
		t.Fatalf("%d peek results left open", n)
	}
}
