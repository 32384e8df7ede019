package parse

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestCacheMatchesParse parses sequences of statement texts through one
// Cache and checks every answer against a fresh Parse of the same text
// (the tree, every node's Location included, and the text), and counts the
// hits: a text differing from a cached one only in the digits of integer
// literals of the same length is a hit; anything else is parsed.
func TestCacheMatchesParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		texts []string
		hits  uint64
	}{
		{"point read, same key length", []string{
			"SELECT abalance FROM pgbench_accounts WHERE aid = 123456;",
			"SELECT abalance FROM pgbench_accounts WHERE aid = 654321;",
			"  SELECT abalance FROM pgbench_accounts WHERE aid = 000042;  ",
		}, 2},
		{"another key length is another entry", []string{
			"SELECT n, s FROM agg WHERE g = 7", "SELECT n, s FROM agg WHERE g = 123", "SELECT n, s FROM agg WHERE g = 8",
		}, 1},
		{"several literals", []string{
			"SELECT a FROM t WHERE a = 1 AND b < 20 ORDER BY 1 LIMIT 5 OFFSET 10",
			"SELECT a FROM t WHERE a = 2 AND b < 30 ORDER BY 2 LIMIT 6 OFFSET 90",
		}, 1},
		{"beyond 32 bits the grammar makes a numeric", []string{
			"SELECT a FROM t WHERE a = 1000000000", "SELECT a FROM t WHERE a = 3000000000", "SELECT a FROM t WHERE a = 2147483647",
		}, 1},
		{"a numeric literal first is never cached", []string{
			"SELECT a FROM t WHERE a = 3000000000", "SELECT a FROM t WHERE a = 1000000000",
		}, 0},
		{"negative literals fold the sign", []string{"SELECT a FROM t WHERE a = -5", "SELECT a FROM t WHERE a = -6"}, 0},
		{"parameters", []string{"SELECT a FROM t WHERE a = $1 AND b = 2", "SELECT a FROM t WHERE a = $1 AND b = 3"}, 0},
		{"strings and floats are kept", []string{
			"SELECT a FROM t WHERE s = 'a1' AND f = 1.5", "SELECT a FROM t WHERE s = 'a2' AND f = 1.5", "SELECT a FROM t WHERE s = 'a1' AND f = 2.5",
		}, 0},
		{"literals the lexer here splits differently", []string{
			"SELECT 1e5, 0x1F, 1_000 FROM t WHERE a = 1", "SELECT 2e5, 0x2F, 2_000 FROM t WHERE a = 2",
		}, 0},
		// The lexer here reads "0" then "x10"; the grammar reads 16, and
		// "1x10" as trailing junk: a hit would hide that syntax error.
		{"a literal the grammar reads another way", []string{"SELECT 0x10 FROM t", "SELECT 1x10 FROM t"}, 0},
		{"digits in comments and identifiers", []string{
			"SELECT c1 FROM t2 WHERE a = 1 -- 7", "SELECT c1 FROM t2 WHERE a = 2 -- 7", "SELECT c1 FROM t2 WHERE a = 2 -- 8",
		}, 1},
		{"no literals: the same text", []string{"SELECT a FROM t", "SELECT a FROM t;", "SELECT b FROM t", " SELECT a FROM t"}, 2},
		{"not a SELECT", []string{"INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"}, 0},
		{"several statements", []string{"SELECT 1; SELECT 2", "SELECT 3; SELECT 4"}, 0},
		{"subquery and function arguments", []string{
			"SELECT substr(s, 1, 2) FROM t WHERE a IN (SELECT b FROM u WHERE c = 5)",
			"SELECT substr(s, 3, 4) FROM t WHERE a IN (SELECT b FROM u WHERE c = 6)",
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(8)
			for _, text := range tc.texts {
				got, gerr := c.Parse(text)
				want, werr := Parse(text)
				if (gerr == nil) != (werr == nil) {
					t.Fatalf("%q: cache error %v, Parse error %v", text, gerr, werr)
				}
				if len(got) != len(want) {
					t.Fatalf("%q: %d statements, want %d", text, len(got), len(want))
				}
				for i := range want {
					g, gok := got[i].(*Postgres)
					w, wok := want[i].(*Postgres)
					if gok != wok || !gok {
						continue
					}
					if g.SQL != w.SQL || !proto.Equal(g.Node, w.Node) {
						t.Fatalf("%q: cached statement differs from Parse:\n got %v %v\nwant %v %v", text, g.SQL, g.Node, w.SQL, w.Node)
					}
				}
			}
			if hits, _ := c.Counts(); hits != tc.hits {
				t.Fatalf("%d hits, want %d", hits, tc.hits)
			}
		})
	}
}

// TestCacheIsBounded checks that a cache never holds more entries than its
// size.
func TestCacheIsBounded(t *testing.T) {
	c := NewCache(2)
	for _, text := range []string{"SELECT 1 FROM a", "SELECT 1 FROM b", "SELECT 1 FROM c", "SELECT 1 FROM d"} {
		if _, err := c.Parse(text); err != nil {
			t.Fatal(err)
		}
		if len(c.entries) > 2 {
			t.Fatalf("%d entries in a cache of 2", len(c.entries))
		}
	}
}

// BenchmarkParsePointRead compares parsing pgbench's point read through
// the grammar and through a Cache (allocations are the comparable number
// on a shared machine: go test -bench ParsePointRead -benchmem).
func BenchmarkParsePointRead(b *testing.B) {
	texts := []string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = 123456;",
		"SELECT abalance FROM pgbench_accounts WHERE aid = 654321;",
	}
	b.Run("grammar", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Parse(texts[i%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		b.ReportAllocs()
		c := NewCache(8)
		for i := 0; i < b.N; i++ {
			if _, err := c.Parse(texts[i%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
