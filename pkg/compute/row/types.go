package row

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Type is the SQL type of a column or a datum.
type Type uint8

// The supported types. The zero value TypeInvalid is never a valid column
// type, so a forgotten field is caught by validation rather than silently
// meaning something.
const (
	TypeInvalid Type = iota
	// TypeNull is the type of an untyped NULL literal; it unifies with every
	// other type and is not a valid column type of a relation.
	TypeNull
	TypeBool
	TypeInt64
	TypeFloat64
	TypeText
	TypeBytes
	// TypeTimestamp is microseconds since the Unix epoch, without time zone.
	TypeTimestamp
	// TypeNumeric is an exact decimal (PostgreSQL's numeric), held as its
	// order-preserving key; values 8..11 are reserved for the date and
	// time types.
	TypeNumeric Type = 12
	// TypeUUID is a 16-byte uuid.
	TypeUUID Type = 13
	// TypeJSONB is a jsonb document, held as its order-preserving key
	// (jsonb.go).
	TypeJSONB Type = 14
	// TypeJSON is a json document, held as its text exactly as written
	// (whitespace, key order and duplicate keys kept; json.go validates
	// it). It has no equality or order in SQL; the row order is its
	// text's, as for any datum.
	TypeJSON Type = 26
)

// The date/time types have explicit values: values 12 and 13 are
// reserved for numeric and uuid, so the numbering is not contiguous.
const (
	// TypeDate is days since 1970-01-01 (math.MinInt32 and MaxInt32 are
	// -infinity and infinity, as in Postgres).
	TypeDate Type = 8
	// TypeTime is microseconds since midnight, in [0, 24h].
	TypeTime Type = 9
	// TypeTimestampTZ is microseconds since the Unix epoch in UTC; it is
	// shown in the session's time zone.
	TypeTimestampTZ Type = 10
	// TypeInterval is months, days and microseconds (see Interval).
	TypeInterval Type = 11
)

var typeNames = [...]string{
	TypeInvalid:          "invalid",
	TypeNull:             "null",
	TypeBool:             "bool",
	TypeInt64:            "int64",
	TypeFloat64:          "float64",
	TypeText:             "text",
	TypeBytes:            "bytes",
	TypeTimestamp:        "timestamp",
	TypeDate:             "date",
	TypeTime:             "time",
	TypeTimestampTZ:      "timestamptz",
	TypeInterval:         "interval",
	TypeNumeric:          "numeric",
	TypeUUID:             "uuid",
	TypeJSONB:            "jsonb",
	TypeInt64Array:       "int64[]",
	TypeFloat64Array:     "float64[]",
	TypeNumericArray:     "numeric[]",
	TypeTextArray:        "text[]",
	TypeBoolArray:        "bool[]",
	TypeDateArray:        "date[]",
	TypeTimestampArray:   "timestamp[]",
	TypeUUIDArray:        "uuid[]",
	TypeBytesArray:       "bytes[]",
	TypeJSONBArray:       "jsonb[]",
	TypeTimestampTZArray: "timestamptz[]",
	TypeJSONArray:        "json[]",
	TypeJSON:             "json",
	TypeRecord:           "record",
	TypeRecordArray:      "record[]",
}

// String returns the canonical lower-case name, also used in JSON.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Valid reports whether t is one of the declared types other than
// TypeInvalid: a type with a name in typeNames (values are not
// contiguous).
func (t Type) Valid() bool { return t > TypeInvalid && int(t) < len(typeNames) && typeNames[t] != "" }

// IsTemporal reports whether t is one of the date/time types.
func (t Type) IsTemporal() bool {
	switch t {
	case TypeTimestamp, TypeDate, TypeTime, TypeTimestampTZ, TypeInterval:
		return true
	}
	return false
}

// IsNumeric reports whether t is int64, float64 or numeric.
func (t Type) IsNumeric() bool { return t == TypeInt64 || t == TypeFloat64 || t == TypeNumeric }

// ParseType parses the canonical name of a type.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if i != int(TypeInvalid) && n != "" && n == s {
			return Type(i), nil
		}
	}
	return TypeInvalid, fmt.Errorf("parse type %q: unknown type", s)
}

// MarshalJSON encodes the type as its name.
func (t Type) MarshalJSON() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("marshal type: invalid type %d", uint8(t))
	}
	return json.Marshal(t.String())
}

// UnmarshalJSON decodes a type name.
func (t *Type) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("unmarshal type: %w", err)
	}
	p, err := ParseType(s)
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// ColumnType is a column's type and whether it may hold NULL.
type ColumnType struct {
	Type     Type `json:"type"`
	Nullable bool `json:"nullable"`
}

// String prints "int64" or "int64?" for a nullable column.
func (c ColumnType) String() string {
	if c.Nullable {
		return c.Type.String() + "?"
	}
	return c.Type.String()
}

// Accepts reports whether datum d may be stored in a column of type c.
func (c ColumnType) Accepts(d Datum) bool {
	if d.IsNull() {
		return c.Nullable
	}
	return d.Type() == c.Type
}

// RelationDesc describes the columns of a relation. Names and Types have
// the same length; names are informational (they may repeat or be empty).
type RelationDesc struct {
	Names []string     `json:"names"`
	Types []ColumnType `json:"types"`
}

// NewRelationDesc returns a description with the given names and types.
func NewRelationDesc(names []string, types []ColumnType) RelationDesc {
	return RelationDesc{Names: names, Types: types}
}

// Arity returns the number of columns.
func (d RelationDesc) Arity() int { return len(d.Types) }

// Name returns the name of column i, or "#i" when it has none.
func (d RelationDesc) Name(i int) string {
	if i >= 0 && i < len(d.Names) && d.Names[i] != "" {
		return d.Names[i]
	}
	return fmt.Sprintf("#%d", i)
}

// Validate checks that names and types line up and every type is a valid
// column type.
func (d RelationDesc) Validate() error {
	if len(d.Names) != len(d.Types) {
		return fmt.Errorf("relation desc: %d names but %d types", len(d.Names), len(d.Types))
	}
	for i, t := range d.Types {
		if !t.Type.Valid() || t.Type == TypeNull {
			return fmt.Errorf("relation desc: column %d (%s) has invalid type %s", i, d.Name(i), t.Type)
		}
	}
	return nil
}

// ErrArity reports a tuple whose length differs from the description.
var ErrArity = errors.New("arity mismatch")

// Check reports whether datums conform to d: same arity, and each datum
// accepted by its column type.
func (d RelationDesc) Check(datums []Datum) error {
	if len(datums) != len(d.Types) {
		return fmt.Errorf("%w: row has %d columns, relation has %d", ErrArity, len(datums), len(d.Types))
	}
	for i, v := range datums {
		if !d.Types[i].Accepts(v) {
			return fmt.Errorf("column %d (%s) of type %s cannot hold %s value %s",
				i, d.Name(i), d.Types[i], v.Type(), v)
		}
	}
	return nil
}

// Concat returns the description of d's columns followed by e's.
func (d RelationDesc) Concat(e RelationDesc) RelationDesc {
	out := RelationDesc{
		Names: make([]string, 0, len(d.Names)+len(e.Names)),
		Types: make([]ColumnType, 0, len(d.Types)+len(e.Types)),
	}
	out.Names = append(append(out.Names, d.Names...), e.Names...)
	out.Types = append(append(out.Types, d.Types...), e.Types...)
	return out
}

// Equal reports whether d and e have the same column types (names are
// ignored: they do not change what a relation contains).
func (d RelationDesc) Equal(e RelationDesc) bool {
	if len(d.Types) != len(e.Types) {
		return false
	}
	for i := range d.Types {
		if d.Types[i] != e.Types[i] {
			return false
		}
	}
	return true
}
