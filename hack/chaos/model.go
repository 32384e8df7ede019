package main

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// state is one possible content of a key: absent, or present with value v.
type state struct {
	present bool
	v       int64
}

func (s state) String() string {
	if !s.present {
		return "absent"
	}
	return fmt.Sprintf("v=%d", s.v)
}

// keyModel is what the clients know of one acct key: the states it may be
// in. One state once every write to it was acknowledged; more after a write
// whose outcome is unknown, until a check observes which one holds.
type keyModel struct {
	possible []state
	// paired keys were written by a transaction with a ledger row.
	paired bool
}

// model is the clients' knowledge of acct and ledger. Writers record each
// write's outcome; the checker compares the tables with it and narrows
// unknown outcomes to what it observed.
type model struct {
	mu   sync.Mutex
	keys map[int64]*keyModel
}

func newModel() *model { return &model{keys: map[int64]*keyModel{}} }

// known returns the single state of k, or false while it is uncertain.
func (m *model) known(k int64) (state, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	km := m.keys[k]
	if km == nil || len(km.possible) != 1 {
		return state{}, false
	}
	return km.possible[0], true
}

// paired reports whether k was written by a transaction with a ledger row.
func (m *model) paired(k int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keys[k] != nil && m.keys[k].paired
}

// write records a write to k that moves every possible state s to next(s):
// replacing the states if it was acknowledged, adding to them if its
// outcome is unknown.
func (m *model) write(k int64, acked, paired bool, next func(state) state) {
	m.mu.Lock()
	defer m.mu.Unlock()
	km := m.keys[k]
	if km == nil {
		km = &keyModel{possible: []state{{}}}
		m.keys[k] = km
	}
	km.paired = km.paired || paired
	var after []state
	for _, s := range km.possible {
		after = append(after, next(s))
	}
	if !acked {
		after = append(after, km.possible...)
	}
	slices.SortFunc(after, func(a, b state) int {
		if a.present != b.present {
			if a.present {
				return 1
			}
			return -1
		}
		return int(a.v - b.v)
	})
	km.possible = slices.Compact(after)
}

// observed is what a check read: acct's rows by key with their count, and
// the keys of ledger with their count.
type observed struct {
	acct   map[int64][]int64 // key -> values (one per row)
	ledger map[int64]int
}

// check compares obs with the model, returns the violations and narrows
// every uncertain key to the state observed.
func (m *model) check(obs observed) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var bad []string
	for k, vs := range obs.acct {
		if m.keys[k] == nil {
			bad = append(bad, fmt.Sprintf("acct key %d present (%v) but never written", k, vs))
		}
	}
	for k, n := range obs.ledger {
		if km := m.keys[k]; km == nil || !km.paired {
			bad = append(bad, fmt.Sprintf("ledger key %d present (%d rows) but never committed", k, n))
		}
	}
	keys := make([]int64, 0, len(m.keys))
	for k := range m.keys {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		km := m.keys[k]
		vs := obs.acct[k]
		if len(vs) > 1 {
			bad = append(bad, fmt.Sprintf("acct key %d present %d times (%v)", k, len(vs), vs))
			continue
		}
		got := state{}
		if len(vs) == 1 {
			got = state{present: true, v: vs[0]}
		}
		if !slices.Contains(km.possible, got) {
			bad = append(bad, fmt.Sprintf("acct key %d is %v, want one of %v", k, got, km.possible))
			continue
		}
		km.possible = []state{got}
		if km.paired {
			if n := obs.ledger[k]; (n == 1) != got.present || n > 1 {
				bad = append(bad, fmt.Sprintf("transaction %d half applied: acct %v, ledger rows %d", k, got, n))
			}
		}
	}
	return bad
}

// counts returns how many keys the model holds and how many are uncertain.
func (m *model) counts() (keys, uncertain int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, km := range m.keys {
		if len(km.possible) > 1 {
			uncertain++
		}
	}
	return len(m.keys), uncertain
}
