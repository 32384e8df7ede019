package parse

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Cache parses the simple protocol's statements, remembering single SELECT
// statements by their text (a repeated text is not parsed again) with the
// digits of their integer literals masked: `SELECT abalance FROM pgbench_accounts WHERE aid = 123` and
// `... WHERE aid = 456` share one entry, and the second is not parsed
// again (the grammar runs in C through cgo and its tree comes back as
// protobuf: most of a point read's parsing cost). A hit reuses the cached
// tree with the integer constants set to the new text's values.
//
// Why a hit is the tree the grammar would build: the key keeps every byte
// of the text except the digits of literals, and a literal's digit count,
// so two texts with one key differ only in the digits of those literals,
// at the same offsets (every node's Location stays right). An entry is
// stored only when each masked literal is a 32-bit integer constant of the
// tree at exactly that offset with exactly that value (so the lexer here
// agreed with the grammar about it), and a hit only when every new value
// fits 32 bits (else the grammar makes it a numeric constant).
//
// A Cache serves one connection: it is not safe for concurrent use, and a
// statement it returns is valid until the next call (a hit rewrites the
// shared tree's constants in place).
type Cache struct {
	max     int
	entries map[string]*cacheEntry
	hits    uint64
	misses  uint64
}

// cacheEntry is one cached statement and its integer constants in the
// order of their literals in the text.
type cacheEntry struct {
	node   *pg.Node
	consts []*pg.Integer
}

// maxCachedText bounds the texts a Cache considers.
const maxCachedText = 4096

// NewCache returns a cache of at most max statements (it is emptied when
// full).
func NewCache(max int) *Cache {
	return &Cache{max: max, entries: map[string]*cacheEntry{}}
}

// Counts returns the cache's hits and misses so far.
func (c *Cache) Counts() (hits, misses uint64) { return c.hits, c.misses }

// Parse is the package's Parse, served from the cache when it can be.
func (c *Cache) Parse(sql string) ([]Statement, error) {
	if len(sql) > maxCachedText || strings.IndexByte(sql, 0) >= 0 {
		return Parse(sql)
	}
	text := strings.TrimRight(strings.TrimSpace(sql), ";")
	key, lits, ok := maskIntegers(text)
	if !ok {
		return Parse(sql)
	}
	if e := c.entries[key]; e != nil {
		if vals, ok := int32Values(text, lits); ok {
			for i, v := range vals {
				e.consts[i].Ival = v
			}
			c.hits++
			return []Statement{&Postgres{Node: e.node, SQL: text}}, nil
		}
	}
	c.misses++
	sts, err := Parse(sql)
	if err != nil || len(sts) != 1 {
		return sts, err
	}
	if e := newCacheEntry(sts[0], text, lits); e != nil {
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
		c.entries[key] = e
	}
	return sts, nil
}

// span is a literal's byte range in the text.
type span struct{ start, end int }

// maskIntegers returns text with the digits of every all-digit numeric
// token replaced by NUL (which no statement text contains) and those
// tokens' spans (a text without any is its own key); ok is false when the
// text does not lex or holds more than one statement.
func maskIntegers(text string) (string, []span, bool) {
	toks, err := lex(text)
	if err != nil {
		return "", nil, false
	}
	var lits []span
	for _, t := range toks {
		if t.sym(";") {
			return "", nil, false
		}
		if t.kind == tokNumber && allDigits(text[t.start:t.end]) {
			lits = append(lits, span{t.start, t.end})
		}
	}
	if len(lits) == 0 {
		return text, nil, true // the same text again is the same tree
	}
	b := []byte(text)
	for _, l := range lits {
		for i := l.start; i < l.end; i++ {
			b[i] = 0
		}
	}
	return string(b), lits, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// int32Values parses the literals at lits; ok is false when one does not
// fit 32 bits.
func int32Values(text string, lits []span) ([]int32, bool) {
	vals := make([]int32, len(lits))
	for i, l := range lits {
		v, err := strconv.ParseInt(text[l.start:l.end], 10, 32)
		if err != nil {
			return nil, false
		}
		vals[i] = int32(v)
	}
	return vals, true
}

// newCacheEntry returns the entry of st, parsed from text, or nil when st
// is not a single SELECT whose literals at lits are exactly its 32-bit
// integer constants at those offsets.
func newCacheEntry(st Statement, text string, lits []span) *cacheEntry {
	p, ok := st.(*Postgres)
	if !ok || p.SQL != text || p.Node.GetSelectStmt() == nil {
		return nil
	}
	vals, ok := int32Values(text, lits)
	if !ok {
		return nil
	}
	byOffset := map[int32]*pg.A_Const{}
	walkConsts(p.Node.ProtoReflect(), func(k *pg.A_Const) { byOffset[k.Location] = k })
	e := &cacheEntry{node: p.Node}
	for i, l := range lits {
		k := byOffset[int32(l.start)]
		if k == nil || k.Isnull || k.GetIval() == nil || k.GetIval().Ival != vals[i] {
			return nil
		}
		delete(byOffset, int32(l.start))
		e.consts = append(e.consts, k.GetIval())
	}
	return e
}

// walkConsts calls fn for every A_Const in m's tree.
func walkConsts(m protoreflect.Message, fn func(*pg.A_Const)) {
	if k, ok := m.Interface().(*pg.A_Const); ok {
		fn(k)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkConsts(l.Get(i).Message(), fn)
			}
		case fd.IsMap():
		case fd.Message() != nil:
			walkConsts(v.Message(), fn)
		}
		return true
	})
}
