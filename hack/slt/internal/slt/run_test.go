package slt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeConn answers from a table of SQL text; SQL not in it fails as
// unsupported. It records what ran.
type fakeConn struct {
	rows map[string][][][]byte
	errs map[string]error
	ran  []string
}

func (c *fakeConn) Exec(ctx context.Context, sql string) error {
	_, err := c.Query(ctx, sql)
	return err
}

func (c *fakeConn) Query(_ context.Context, sql string) ([][][]byte, error) {
	c.ran = append(c.ran, sql)
	if err, ok := c.errs[sql]; ok {
		return nil, err
	}
	if rows, ok := c.rows[sql]; ok {
		return rows, nil
	}
	return nil, fmt.Errorf("unsupported: %s", sql)
}

func vals(vs ...string) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		if v != "NULL" {
			out[i] = []byte(v)
		}
	}
	return out
}

const runScript = `statement ok
CREATE TABLE t(a INTEGER)

statement error
CREATE TABLE t(a INTEGER, a INTEGER)

statement error
DROP TABLE nothing

statement ok
CREATE INDEX i ON t(a)

query I rowsort
SELECT a FROM t
----
1
2

query I rowsort
SELECT a+1 FROM t
----
2
3

query II nosort
SELECT a, a FROM t
----
2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0

query I nosort
SELECT a, a FROM t WHERE a = 1
----
1

skipif postgresql
query I nosort
SELECT 'skipped'
----
x

onlyif postgresql
halt

query I nosort
SELECT 'after the halt'
----
x
`

func TestRunClassifies(t *testing.T) {
	recs, err := Parse("run", strings.NewReader(runScript))
	if err != nil {
		t.Fatal(err)
	}
	conn := &fakeConn{
		rows: map[string][][][]byte{
			"CREATE TABLE t(a INTEGER)":      nil,
			"DROP TABLE nothing":             nil,
			"SELECT a FROM t":                {vals("2"), vals("1")},
			"SELECT a+1 FROM t":              {vals("2"), vals("4")},
			"SELECT a, a FROM t":             {vals("1", "2")},
			"SELECT a, a FROM t WHERE a = 1": {vals("1", "1")},
		},
	}
	var got []string
	err = Run(context.Background(), conn, recs, Options{DB: "postgresql", OnResult: func(r Result) {
		got = append(got, fmt.Sprintf("%d %s", r.Record.Line, r.Outcome))
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 passed",        // statement ok that succeeded
		"4 passed",        // statement error that failed
		"7 unexpected-ok", // statement error that succeeded
		"10 errored",      // statement ok the database refused
		"13 passed",       // rowsort puts 2, 1 in order
		"19 wrong",        // values differ
		"25 passed",       // hash of 1, 2
		"30 wrong",        // a row wider than its types
		"35 skipped",      // skipif postgresql
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if slices.Contains(conn.ran, "SELECT 'after the halt'") {
		t.Error("ran a record after halt")
	}
}

func TestRunStopsWhenBroken(t *testing.T) {
	recs, err := Parse("broken", strings.NewReader("statement ok\nSELECT 1\n\nstatement ok\nSELECT 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	conn := &fakeConn{errs: map[string]error{"SELECT 1": fmt.Errorf("%w: server exited", ErrBroken)}}
	n := 0
	err = Run(context.Background(), conn, recs, Options{OnResult: func(Result) { n++ }})
	if !errors.Is(err, ErrBroken) {
		t.Fatalf("got %v, want ErrBroken", err)
	}
	if n != 0 || len(conn.ran) != 1 {
		t.Errorf("after a broken connection: %d results, ran %q", n, conn.ran)
	}
}

func TestRunTimeoutContext(t *testing.T) {
	recs, err := Parse("timeout", strings.NewReader("statement ok\nSELECT 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	called := false
	conn := &fakeConn{rows: map[string][][][]byte{"SELECT 1": nil}}
	err = Run(context.Background(), conn, recs, Options{StatementContext: func(ctx context.Context) (context.Context, context.CancelFunc) {
		called = true
		return context.WithCancel(ctx)
	}})
	if err != nil || !called {
		t.Errorf("err %v, StatementContext called %v", err, called)
	}
}

func TestRunCheckLabels(t *testing.T) {
	script := `query I nosort label-1
SELECT 1
----
1

query I nosort label-1
SELECT 2
----
2

query I nosort label-2
SELECT 2
----
2
`
	recs, err := Parse("labels", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	conn := &fakeConn{rows: map[string][][][]byte{"SELECT 1": {vals("1")}, "SELECT 2": {vals("2")}}}
	for _, check := range []bool{false, true} {
		var got []string
		err := Run(context.Background(), conn, recs, Options{CheckLabels: check, OnResult: func(r Result) {
			got = append(got, r.Outcome.String())
		}})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"passed", "passed", "passed"}
		if check {
			// The second query matches its own expectation but not the
			// first query with its label.
			want[1] = "wrong"
		}
		if !slices.Equal(got, want) {
			t.Errorf("CheckLabels=%v: got %q, want %q", check, got, want)
		}
	}
}
