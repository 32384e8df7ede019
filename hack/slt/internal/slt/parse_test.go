package slt

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/parse")

func parseFile(t *testing.T, path string) ([]Record, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(filepath.Base(path), f)
}

// TestParseGolden parses every well-formed fixture and compares the records
// with NAME.json next to it (go test -update rewrites them).
func TestParseGolden(t *testing.T) {
	for _, name := range []string{"records", "crlf"} {
		t.Run(name, func(t *testing.T) {
			recs, err := parseFile(t, filepath.Join("testdata", "parse", name+".slt"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(recs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "parse", name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("records differ from %s:\n%s", golden, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		line int
		msg  string
	}{
		{"bad-unknown", 4, `unknown record "frobnicate"`},
		{"bad-sort", 1, `unknown sort mode "sideways"`},
		{"bad-types", 1, `is not one of I, R, T`},
		{"bad-statement", 1, "ok or error"},
		{"bad-dangling-condition", 2, "apply to no record"},
		{"bad-after-hash", 5, "values after a hash line"},
		{"bad-empty-sql", 2, "record without SQL"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := parseFile(t, filepath.Join("testdata", "parse", tc.file+".slt"))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", pe.Line, pe.Msg, tc.line, tc.msg)
			}
		})
	}
}

func TestApplies(t *testing.T) {
	for _, tc := range []struct {
		conds []Condition
		want  bool
	}{
		{nil, true},
		{[]Condition{{Skip: true, DB: "postgresql"}}, false},
		{[]Condition{{Skip: true, DB: "mysql"}}, true},
		{[]Condition{{Skip: false, DB: "postgresql"}}, true},
		{[]Condition{{Skip: false, DB: "mssql"}}, false},
		{[]Condition{{Skip: true, DB: "mysql"}, {Skip: false, DB: "mssql"}}, false},
		{[]Condition{{Skip: false, DB: "PostgreSQL"}}, true},
	} {
		r := Record{Conditions: tc.conds}
		if got := r.Applies("postgresql"); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.conds, got, tc.want)
		}
	}
}
