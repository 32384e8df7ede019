package plan

import (
	"fmt"
	"strconv"
)

// GlobalID names a collection, index or sink: a namespace and a number,
// printed "u12" (user), "s3" (system/introspection), "t7" (transient:
// one-shot reads) or "l1" (local: a Let's value or a Recursive node's
// working table, read only inside that node's Body or Step). The printed form is canonical everywhere (logs,
// metrics, SQL, the wire): no sign, no leading zeros.
type GlobalID struct {
	Kind byte
	N    uint64
}

// The GlobalID namespaces.
const (
	KindUser      byte = 'u'
	KindSystem    byte = 's'
	KindTransient byte = 't'
	KindLocal     byte = 'l'
)

// User, System and Transient construct ids in their namespace.
func User(n uint64) GlobalID      { return GlobalID{Kind: KindUser, N: n} }
func System(n uint64) GlobalID    { return GlobalID{Kind: KindSystem, N: n} }
func Transient(n uint64) GlobalID { return GlobalID{Kind: KindTransient, N: n} }
func Local(n uint64) GlobalID     { return GlobalID{Kind: KindLocal, N: n} }

// Valid reports whether id has a known namespace. The zero GlobalID is
// not valid, so a forgotten id is caught.
func (id GlobalID) Valid() bool {
	return id.Kind == KindUser || id.Kind == KindSystem || id.Kind == KindTransient || id.Kind == KindLocal
}

// IsZero reports whether id is the zero value.
func (id GlobalID) IsZero() bool { return id == GlobalID{} }

// String returns the canonical form, e.g. "u12". An invalid id prints as
// "invalid(<kind byte>,<n>)" so logs show what went wrong.
func (id GlobalID) String() string {
	if !id.Valid() {
		return fmt.Sprintf("invalid(%d,%d)", id.Kind, id.N)
	}
	return string(id.Kind) + strconv.FormatUint(id.N, 10)
}

// Compare orders ids by namespace, then number.
func (id GlobalID) Compare(o GlobalID) int {
	switch {
	case id.Kind != o.Kind:
		if id.Kind < o.Kind {
			return -1
		}
		return 1
	case id.N < o.N:
		return -1
	case id.N > o.N:
		return 1
	}
	return 0
}

// ParseGlobalID parses the canonical form.
func ParseGlobalID(s string) (GlobalID, error) {
	if len(s) < 2 {
		return GlobalID{}, fmt.Errorf("parse global id %q: too short", s)
	}
	id := GlobalID{Kind: s[0]}
	if !id.Valid() {
		return GlobalID{}, fmt.Errorf("parse global id %q: unknown namespace %q (want u, s, t or l)", s, s[0])
	}
	digits := s[1:]
	if len(digits) > 1 && digits[0] == '0' {
		return GlobalID{}, fmt.Errorf("parse global id %q: leading zero", s)
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return GlobalID{}, fmt.Errorf("parse global id %q: not a decimal number", s)
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return GlobalID{}, fmt.Errorf("parse global id %q: %w", s, err)
	}
	id.N = n
	return id, nil
}

// MarshalText encodes the canonical form; JSON uses it for values and
// map keys.
func (id GlobalID) MarshalText() ([]byte, error) {
	if !id.Valid() {
		return nil, fmt.Errorf("marshal global id: %s", id)
	}
	return []byte(id.String()), nil
}

// UnmarshalText parses the canonical form.
func (id *GlobalID) UnmarshalText(b []byte) error {
	p, err := ParseGlobalID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}
