package slt

import (
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the parser panic or hang, and that
// what it returns is consistent: every query has valid column types and a
// hashed result carries no values. The seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("statement ok\nSELECT 1\n")
	f.Add("query I rowsort\nSELECT 1\n----\n1\n")
	f.Fuzz(func(t *testing.T, script string) {
		recs, _ := Parse("fuzz", strings.NewReader(script))
		for _, r := range recs {
			if r.Kind == Query {
				if r.Types == "" || strings.Trim(r.Types, "IRT") != "" {
					t.Errorf("query at line %d has column types %q", r.Line, r.Types)
				}
				if r.Hashed && len(r.Expected) > 0 {
					t.Errorf("query at line %d has a hash and values", r.Line)
				}
			}
			if (r.Kind == Query || r.Kind == Statement) && r.SQL == "" {
				t.Errorf("record at line %d has no SQL", r.Line)
			}
		}
	})
}
