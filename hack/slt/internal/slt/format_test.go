package slt

import (
	"slices"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		typ  byte
		in   []byte // nil is NULL
		want string
	}{
		{'I', nil, "NULL"},
		{'R', nil, "NULL"},
		{'T', nil, "NULL"},
		{'I', []byte("42"), "42"},
		{'I', []byte("-7"), "-7"},
		{'I', []byte("2.9"), "2"},   // a real in an I column truncates
		{'I', []byte("-2.9"), "-2"}, // toward zero
		{'I', []byte("t"), "1"},
		{'I', []byte("f"), "0"},
		{'I', []byte("12abc"), "12"}, // SQLite's leading-integer rule
		{'I', []byte("abc"), "0"},
		{'I', []byte("9223372036854775807"), "9223372036854775807"},
		{'R', []byte("1.5"), "1.500"},
		{'R', []byte("3"), "3.000"},
		{'R', []byte("-0.0004"), "-0.000"},
		{'R', []byte("2.0005"), "2.001"},
		{'R', []byte("1e3"), "1000.000"},
		{'R', []byte("x"), "0.000"},
		{'T', []byte(""), "(empty)"},
		{'T', []byte("abc"), "abc"},
		{'T', []byte("a b"), "a b"},
		{'T', []byte("a\tb\nc"), "a@b@c"},
		{'T', []byte("caf\xc3\xa9"), "caf@@"}, // non-ASCII, byte by byte
		{'T', []byte("~\x7f"), "~@"},
		{'T', []byte("81.46"), "81.46"},
	} {
		if got := FormatValue(tc.typ, tc.in); got != tc.want {
			t.Errorf("FormatValue(%c, %q) = %q, want %q", tc.typ, tc.in, got, tc.want)
		}
	}
}

func TestFormatRows(t *testing.T) {
	got, err := FormatRows("ITR", [][][]byte{{[]byte("1"), nil, []byte("2")}, {[]byte("3"), []byte(""), nil}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "NULL", "2.000", "3", "(empty)", "NULL"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := FormatRows("II", [][][]byte{{[]byte("1")}}); err == nil {
		t.Error("a row narrower than its types must be refused")
	}
}

func TestSortValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []string
		width int
		mode  SortMode
		want  []string
	}{
		{"nosort keeps order", []string{"b", "a"}, 1, NoSort, []string{"b", "a"}},
		{"valuesort is bytewise", []string{"9", "10", "NULL", "-1"}, 1, ValueSort, []string{"-1", "10", "9", "NULL"}},
		{"valuesort ignores rows", []string{"2", "1", "4", "3"}, 2, ValueSort, []string{"1", "2", "3", "4"}},
		{"rowsort keeps rows together", []string{"2", "a", "1", "b", "10", "c"}, 2, RowSort, []string{"1", "b", "10", "c", "2", "a"}},
		{"rowsort breaks ties on later columns", []string{"1", "z", "1", "y"}, 2, RowSort, []string{"1", "y", "1", "z"}},
		{"rowsort of a ragged result leaves it", []string{"b", "a", "c"}, 2, RowSort, []string{"b", "a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := slices.Clone(tc.in)
			SortValues(v, tc.width, tc.mode)
			if !slices.Equal(v, tc.want) {
				t.Errorf("got %q, want %q", v, tc.want)
			}
		})
	}
}

func TestHashValues(t *testing.T) {
	// Digests computed independently: printf '1\n2\n' | md5sum.
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"1", "2"}, "6ddb4095eb719e2a9f0a3f95677d24e0"},
		{[]string{"x"}, "401b30e3b8b5d629635a5c613cdb7919"},
		{nil, "d41d8cd98f00b204e9800998ecf8427e"},
	} {
		if got := HashValues(tc.in); got != tc.want {
			t.Errorf("HashValues(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	values := &Record{Expected: []string{"1", "2"}}
	hashed := &Record{Hashed: true, HashCount: 2, Hash: "6ddb4095eb719e2a9f0a3f95677d24e0"}
	for _, tc := range []struct {
		name string
		rec  *Record
		got  []string
		ok   bool
	}{
		{"same values", values, []string{"1", "2"}, true},
		{"other value", values, []string{"1", "3"}, false},
		{"fewer values", values, []string{"1"}, false},
		{"more values", values, []string{"1", "2", "3"}, false},
		{"hash matches", hashed, []string{"1", "2"}, true},
		{"hash differs", hashed, []string{"2", "1"}, false},
		{"count differs", hashed, []string{"1", "2", "3"}, false},
		{"no rows expected", &Record{}, nil, true},
	} {
		if diff := Check(tc.rec, tc.got); (diff == "") != tc.ok {
			t.Errorf("%s: Check = %q, want ok=%v", tc.name, diff, tc.ok)
		}
	}
}
