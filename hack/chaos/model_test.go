package main

import (
	"strings"
	"testing"
)

func obs(acct map[int64][]int64, ledger map[int64]int) observed {
	return observed{acct: acct, ledger: ledger}
}

func TestModelCheck(t *testing.T) {
	tests := []struct {
		name    string
		writes  func(m *model)
		obs     observed
		wantBad string // substring of the first violation; "" for none
	}{
		{"acked insert present", func(m *model) { m.write(1, true, false, insert) },
			obs(map[int64][]int64{1: {0}}, nil), ""},
		{"acked insert lost", func(m *model) { m.write(1, true, false, insert) },
			obs(nil, nil), "acct key 1 is absent"},
		{"acked insert duplicated", func(m *model) { m.write(1, true, false, insert) },
			obs(map[int64][]int64{1: {0, 0}}, nil), "present 2 times"},
		{"unknown insert absent", func(m *model) { m.write(1, false, false, insert) },
			obs(nil, nil), ""},
		{"unknown insert present", func(m *model) { m.write(1, false, false, insert) },
			obs(map[int64][]int64{1: {0}}, nil), ""},
		{"acked update lost", func(m *model) { m.write(1, true, false, insert); m.write(1, true, false, incr) },
			obs(map[int64][]int64{1: {0}}, nil), "want one of [v=1]"},
		{"acked delete undone", func(m *model) { m.write(1, true, false, insert); m.write(1, true, false, remove) },
			obs(map[int64][]int64{1: {0}}, nil), "want one of [absent]"},
		{"never written", func(m *model) {},
			obs(map[int64][]int64{7: {0}}, nil), "never written"},
		{"transaction whole", func(m *model) { m.write(1, true, true, insert) },
			obs(map[int64][]int64{1: {0}}, map[int64]int{1: 1}), ""},
		{"transaction half applied", func(m *model) { m.write(1, false, true, insert) },
			obs(map[int64][]int64{1: {0}}, nil), "half applied"},
		{"ledger without transaction", func(m *model) { m.write(1, true, false, insert) },
			obs(map[int64][]int64{1: {0}}, map[int64]int{1: 1}), "never committed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel()
			tt.writes(m)
			bad := m.check(tt.obs)
			switch {
			case tt.wantBad == "" && len(bad) > 0:
				t.Fatalf("violations %v, want none", bad)
			case tt.wantBad != "" && (len(bad) == 0 || !strings.Contains(bad[0], tt.wantBad)):
				t.Fatalf("violations %v, want one containing %q", bad, tt.wantBad)
			}
		})
	}
}

// TestCheckNarrowsUnknownOutcomes: once a check saw an unknown write
// applied, a later check that finds it gone is a lost write.
func TestCheckNarrowsUnknownOutcomes(t *testing.T) {
	m := newModel()
	m.write(1, false, false, insert)
	if bad := m.check(obs(map[int64][]int64{1: {0}}, nil)); len(bad) > 0 {
		t.Fatal(bad)
	}
	if _, ok := m.known(1); !ok {
		t.Fatal("key still uncertain after a check observed it")
	}
	if bad := m.check(obs(nil, nil)); len(bad) == 0 {
		t.Fatal("a write seen applied then missing was not reported")
	}
}
