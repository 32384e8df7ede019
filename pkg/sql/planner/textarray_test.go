package planner

import (
	"slices"
	"testing"
)

// TestParseTextArray pins the array literal reader's quoting and escapes.
func TestParseTextArray(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		in      string
		want    []*string
		wantErr bool
	}{
		{in: `{a,b}`, want: []*string{str("a"), str("b")}},
		{in: `{ a , "b" }`, want: []*string{str("a"), str("b")}},
		{in: `{"a,b",c}`, want: []*string{str("a,b"), str("c")}},
		{in: `{"a\"b"}`, want: []*string{str(`a"b`)}},
		{in: `{"a\\"}`, want: []*string{str(`a\`)}},
		{in: `{a\,b}`, want: []*string{str("a,b")}},
		{in: `{NULL,"NULL"}`, want: []*string{nil, str("NULL")}},
		{in: `{}`},
		{in: `{a\}`, wantErr: true},
		{in: `{"a\}`, wantErr: true},
		{in: `{"ab}`, wantErr: true},
		{in: `{a"b}`, wantErr: true},
		{in: `{a{b}`, wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseTextArray(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseTextArray(%s) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !slices.EqualFunc(got, tc.want, func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }) {
			t.Errorf("parseTextArray(%s) = %v, want %v", tc.in, deref(got), deref(tc.want))
		}
	}
}

func deref(ss []*string) []string {
	var out []string
	for _, s := range ss {
		if s == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, *s)
		}
	}
	return out
}
