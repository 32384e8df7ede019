package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

type rowKey struct {
	out int
	row string
	t   frontier.Time
}

// multiset sums the diffs of updates per (output, row, time).
func multiset(ups []Update) map[rowKey]int64 {
	m := map[rowKey]int64{}
	for _, u := range ups {
		m[rowKey{u.Output, string(u.Row), u.Time}] += u.Diff
	}
	maps.DeleteFunc(m, func(_ rowKey, d int64) bool { return d == 0 })
	return m
}

// accumulate returns the collection per output as of time t.
func accumulate(ups []Update, t frontier.Time) []map[string]int64 {
	out := make([]map[string]int64, 5)
	for i := range out {
		out[i] = map[string]int64{}
	}
	for _, u := range ups {
		if u.Time <= t {
			out[u.Output][string(u.Row)] += u.Diff
		}
	}
	for _, m := range out {
		maps.DeleteFunc(m, func(_ string, d int64) bool { return d == 0 })
	}
	return out
}

func mustNew(t *testing.T, kind Kind, opts map[string]string) Generator {
	t.Helper()
	o, err := ParseOptions(string(kind), opts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func collect(t *testing.T, g Generator, from, to Tick, s Shard) []Update {
	t.Helper()
	ups, err := Collect(g, from, to, s)
	if err != nil {
		t.Fatal(err)
	}
	return ups
}

func generators(t *testing.T) map[string]Generator {
	return map[string]Generator{
		"counter":     mustNew(t, KindCounter, map[string]string{"TICK INTERVAL": "10ms"}),
		"counter-max": mustNew(t, KindCounter, map[string]string{"MAX CARDINALITY": "4", "start_ms": "1000"}),
		"kv": mustNew(t, KindKeyValue, map[string]string{
			"KEYS": "37", "PARTITIONS": "4", "VALUE SIZE": "13", "SNAPSHOT ROUNDS": "3", "UPDATES PER TICK": "10", "SEED": "9"}),
		"kv-fast": mustNew(t, KindKeyValue, map[string]string{"KEYS": "5", "UPDATES_PER_TICK": "12", "VALUE_SIZE": "0"}),
		"auction": mustNew(t, KindAuction, map[string]string{
			"ORGANIZATIONS": "7", "USERS": "40", "AUCTIONS PER TICK": "3", "BIDS PER TICK": "11", "AUCTION TICKS": "4"}),
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		gen  string
		opts map[string]string
		ok   bool
	}{
		{"COUNTER", nil, true},
		{"counter", map[string]string{"TICK INTERVAL": "250ms"}, true},
		{"key value", map[string]string{"KEYS": "10", "value_size": "4"}, true},
		{"KEY_VALUE", map[string]string{"KEYS": "0"}, false},
		{"AUCTION", map[string]string{"USERS": "x"}, false},
		{"AUCTION", map[string]string{"NOPE": "1"}, false},
		{"TPCH", nil, false},
		{"COUNTER", map[string]string{"TICK INTERVAL": "0"}, false},
		{"COUNTER", map[string]string{"TICK INTERVAL": "10us"}, false},
		{"KEY VALUE", map[string]string{"VALUE SIZE": "99999999"}, false},
	}
	for _, tt := range tests {
		_, err := ParseOptions(tt.gen, tt.opts)
		if (err == nil) != tt.ok {
			t.Errorf("ParseOptions(%q, %v) error %v, want ok=%v", tt.gen, tt.opts, err, tt.ok)
		}
	}
	o, err := ParseOptions("COUNTER", map[string]string{"TICK INTERVAL": "1s"})
	if err != nil || o.TickMS != 1000 {
		t.Fatalf("tick interval 1s: %v %d", err, o.TickMS)
	}
}

func TestClock(t *testing.T) {
	c := Clock{Start: 1000, TickMS: 10}
	if c.TimeOf(0) != 1000 || c.TimeOf(3) != 1030 {
		t.Fatal("TimeOf")
	}
	for _, tc := range []struct {
		t    frontier.Time
		want Tick
	}{{0, 0}, {999, 0}, {1000, 0}, {1009, 0}, {1010, 1}, {1035, 3}} {
		if got := c.TickAt(tc.t); got != tc.want {
			t.Errorf("TickAt(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

// TestShardsPartition: for 1, 2 and 4 shards, the shards' outputs are
// disjoint, every row is owned by the shard its key hashes to, and their
// union is the single-shard output.
func TestShardsPartition(t *testing.T) {
	for name, g := range generators(t) {
		t.Run(name, func(t *testing.T) {
			want := multiset(collect(t, g, 0, 15, Shard{0, 1}))
			if len(want) == 0 {
				t.Fatal("generator produced nothing")
			}
			for _, n := range []int{2, 4} {
				union := map[rowKey]int64{}
				for w := range n {
					s := Shard{w, n}
					for k, d := range multiset(collect(t, g, 0, 15, s)) {
						if _, dup := union[k]; dup {
							t.Fatalf("%d shards: row %v produced by two shards", n, k)
						}
						union[k] = d
						r := row.Row(k.row)
						key, err := row.Project(r, g.Outputs()[k.out].Key)
						if err != nil {
							t.Fatal(err)
						}
						if !s.Owns(key) {
							t.Fatalf("shard %v emitted a row it does not own", s)
						}
					}
				}
				if !maps.Equal(union, want) {
					t.Fatalf("%d shards: union differs from one shard (%d vs %d entries)", n, len(union), len(want))
				}
			}
		})
	}
}

// TestDeterministic: generating twice, or in pieces, gives the same updates
// in the same order, and every row fits its relation.
func TestDeterministic(t *testing.T) {
	for name, g := range generators(t) {
		t.Run(name, func(t *testing.T) {
			s := Shard{1, 3}
			a := collect(t, g, 0, 12, s)
			b := collect(t, g, 0, 12, s)
			pieces := append(append(collect(t, g, 0, 1, s), collect(t, g, 1, 5, s)...), collect(t, g, 5, 12, s)...)
			eq := func(x, y []Update) bool {
				return slices.EqualFunc(x, y, func(u, v Update) bool {
					return u.Output == v.Output && string(u.Row) == string(v.Row) && u.Time == v.Time && u.Diff == v.Diff
				})
			}
			if !eq(a, b) || !eq(a, pieces) {
				t.Fatal("generation is not a pure function of the tick range")
			}
			if len(collect(t, g, 7, 7, s)) != 0 {
				t.Fatal("empty tick range produced updates")
			}
			clock := g.Clock()
			for _, u := range a {
				datums, err := u.Row.Unpack()
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Outputs()[u.Output].Desc.Check(datums); err != nil {
					t.Fatal(err)
				}
				if tick := clock.TickAt(u.Time); u.Time != clock.TimeOf(tick) || tick < 1 || tick > 12 {
					t.Fatalf("update at %d is not a tick time in (0, 12]", u.Time)
				}
			}
		})
	}
	if _, err := Collect(generators(t)["kv"], 5, 3, Shard{0, 1}); err == nil {
		t.Error("from > to accepted")
	}
	if _, err := Collect(generators(t)["kv"], 0, 3, Shard{2, 2}); err == nil {
		t.Error("bad shard accepted")
	}
}

func TestCounter(t *testing.T) {
	g := generators(t)["counter-max"]
	ups := collect(t, g, 0, 10, Shard{0, 1})
	clock := g.Clock()
	for i := Tick(1); i <= 10; i++ {
		got := accumulate(ups, clock.TimeOf(i))[0]
		want := map[string]int64{}
		for c := max(1, int64(i)-3); c <= int64(i); c++ {
			want[string(row.Pack(row.Int64(c)))] = 1
		}
		if !maps.Equal(got, want) {
			t.Fatalf("tick %d: %d rows, want %d", i, len(got), len(want))
		}
	}
}

// TestKeyValue: after every tick the collection has each key exactly once,
// at the version the closed form predicts, in its partition.
func TestKeyValue(t *testing.T) {
	for _, name := range []string{"kv", "kv-fast"} {
		g := generators(t)[name].(*keyValue)
		ups := collect(t, g, 0, 9, Shard{0, 1})
		clock := g.Clock()
		for i := Tick(1); i <= 9; i++ {
			got := accumulate(ups, clock.TimeOf(i))[0]
			want := map[string]int64{}
			s := &kvScratch{opts: &g.opts}
			for k := range g.opts.Keys {
				s.encode(k, g.version(k, i))
				want[string(s.out)] = 1
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%s tick %d: collection differs from closed form", name, i)
			}
		}
	}
}

// TestAuctionJoins: every foreign key resolves, and every bid goes to an
// auction that exists and is still open when the bid is placed.
func TestAuctionJoins(t *testing.T) {
	g := generators(t)["auction"]
	ups := collect(t, g, 0, 20, Shard{0, 1})
	all := accumulate(ups, g.Clock().TimeOf(20))
	ids := func(out int) map[int64][]row.Datum {
		m := map[int64][]row.Datum{}
		for r, d := range all[out] {
			if d != 1 {
				t.Fatalf("%s row with multiplicity %d", g.Outputs()[out].Name, d)
			}
			ds, err := row.Row(r).Unpack()
			if err != nil {
				t.Fatal(err)
			}
			if _, dup := m[ds[0].Int64()]; dup {
				t.Fatalf("%s: duplicate id %d", g.Outputs()[out].Name, ds[0].Int64())
			}
			m[ds[0].Int64()] = ds
		}
		return m
	}
	orgs, users, accounts, auctions, bids := ids(AuctionOrganizations), ids(AuctionUsers), ids(AuctionAccounts), ids(AuctionAuctions), ids(AuctionBids)
	if len(orgs) != 7 || len(users) != 40 || len(accounts) != 7 || len(auctions) != 60 || len(bids) != 220 {
		t.Fatalf("sizes %d %d %d %d %d", len(orgs), len(users), len(accounts), len(auctions), len(bids))
	}
	for _, u := range users {
		if _, ok := orgs[u[1].Int64()]; !ok {
			t.Fatalf("user %v: unknown org", u)
		}
	}
	for _, a := range auctions {
		if _, ok := users[a[1].Int64()]; !ok {
			t.Fatalf("auction %v: unknown seller", a)
		}
	}
	for _, b := range bids {
		a, ok := auctions[b[2].Int64()]
		if !ok {
			t.Fatalf("bid %v: unknown auction", b)
		}
		if _, ok := users[b[1].Int64()]; !ok {
			t.Fatalf("bid %v: unknown buyer", b)
		}
		if b[4].Timestamp() >= a[3].Timestamp() {
			t.Fatalf("bid %v placed after auction %v ended", b, a)
		}
		if opened := a[3].Timestamp() - 4*1000*1000; b[4].Timestamp() < opened {
			t.Fatalf("bid %v placed before auction %v opened", b, a)
		}
	}
}

// TestChunks: generating in chunks of any size, resuming from the returned
// positions, emits exactly what Generate emits, in order; a chunk never
// exceeds its item budget.
func TestChunks(t *testing.T) {
	for name, g := range generators(t) {
		t.Run(name, func(t *testing.T) {
			s := Shard{0, 2}
			want := collect(t, g, 3, 14, s)
			for _, size := range []uint64{1, 2, 7, 50, 1 << 40} {
				var got []Update
				emit := func(o int, r row.Row, tm frontier.Time, d int64) {
					got = append(got, Update{o, slices.Clone(r), tm, d})
				}
				pos := Start(3)
				for steps := 0; pos.Tick <= 14; steps++ {
					before := len(got)
					next, err := g.GenerateChunk(pos, 14, size, s, emit)
					if err != nil {
						t.Fatal(err)
					}
					// No item emits more than 5 updates (KEY VALUE, 3 rounds).
					if n := uint64(len(got) - before); n > 5*size {
						t.Fatalf("chunk of %d items emitted %d updates", size, n)
					}
					if next == pos || steps > 10000 {
						t.Fatalf("chunk of %d made no progress at %v", size, pos)
					}
					pos = next
				}
				if !slices.EqualFunc(got, want, func(u, v Update) bool {
					return u.Output == v.Output && string(u.Row) == string(v.Row) && u.Time == v.Time && u.Diff == v.Diff
				}) {
					t.Fatalf("chunks of %d: %d updates differ from Generate's %d", size, len(got), len(want))
				}
			}
			if _, err := g.GenerateChunk(Position{}, 3, 1, s, func(int, row.Row, frontier.Time, int64) {}); err == nil {
				t.Fatal("chunk at tick 0 accepted")
			}
		})
	}
}
