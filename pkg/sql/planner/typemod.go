package planner

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TypeMod is what a SQL type declares beyond its row type, as IntWidth
// is for integers: varchar(n) and char(n) are text with a length rule,
// numeric(p,s) is numeric with a precision and scale. The planner applies
// the rules where Postgres does (assignment to a column, explicit casts)
// and carries the modifier with values so that results are described
// (RowDescription's type OID and typmod) and printed (numeric scale,
// char(n) padding) as Postgres does. The zero TypeMod declares nothing.
type TypeMod struct {
	Kind ModKind
	// N is the length of varchar(n) and char(n) (0: no limit) or the
	// precision of numeric(p,s) (0: unconstrained, only the display
	// scale is known).
	N int32
	// Scale is the numeric display scale (Kind ModNumeric).
	Scale int32
	// Unsized values are padded to N (char(n)) but described without the
	// length (typmod -1), as PostgreSQL describes a function's result
	// such as array_agg of a char(n) column.
	Unsized bool
}

// ModKind is the kind of a TypeMod.
type ModKind uint8

// The modifier kinds.
const (
	ModNone    ModKind = iota
	ModVarchar         // character varying
	ModBpchar          // character: stored without trailing spaces, padded on output
	ModNumeric         // numeric with a known (display) scale
)

// Limits Postgres puts on the modifiers.
const (
	maxCharLength       = 10485760
	maxNumericPrecision = 1000
)

// Type OIDs the modifiers describe values with.
const (
	oidBpchar       = 1042
	oidVarchar      = 1043
	oidNumeric      = 1700
	oidBpcharArray  = 1014
	oidVarcharArray = 1015
)

// TypeModFromName returns the modifier a SQL type name declares, checking
// it as Postgres does (22023 for a bad length, precision or scale).
//
// An array of varchar or char (varchar(n)[], char(n)[]) has its element's
// modifier, which gives the array its OID (1015, 1014) and applies the
// length rule to every element; arrays of other types have none.
func TypeModFromName(tn *pg.TypeName) (TypeMod, error) {
	if tn == nil || len(tn.Names) == 0 {
		return TypeMod{}, nil
	}
	if len(tn.ArrayBounds) > 0 {
		m, err := TypeModFromName(&pg.TypeName{Names: tn.Names, Typmods: tn.Typmods})
		return charMod(m), err
	}
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	mods := make([]int64, 0, len(tn.Typmods))
	for _, m := range tn.Typmods {
		k := m.GetAConst()
		if k == nil || k.GetIval() == nil {
			return TypeMod{}, sqlerr.New(sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		mods = append(mods, int64(k.GetIval().Ival))
	}
	switch name := typeName(parts); name {
	case "varchar", "character varying", "bpchar", "char", "character":
		kind := ModVarchar
		if name != "varchar" && name != "character varying" {
			kind = ModBpchar
		}
		switch len(mods) {
		case 0:
			return TypeMod{Kind: kind}, nil
		case 1:
			if mods[0] < 1 {
				return TypeMod{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "length for type %s must be at least 1", name)
			}
			if mods[0] > maxCharLength {
				return TypeMod{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "length for type %s cannot exceed %d", name, maxCharLength)
			}
			return TypeMod{Kind: kind, N: int32(mods[0])}, nil
		}
		return TypeMod{}, sqlerr.Errorf(sqlerr.SyntaxError, "invalid type modifier")
	case "numeric", "decimal":
		switch len(mods) {
		case 0:
			return TypeMod{}, nil
		case 1, 2:
			p, s := mods[0], int64(0)
			if len(mods) == 2 {
				s = mods[1]
			}
			if p < 1 || p > maxNumericPrecision {
				return TypeMod{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and %d", p, maxNumericPrecision)
			}
			if s < 0 || s > p {
				// Postgres 15 also accepts a negative scale or one above
				// the precision; Tandem does not.
				return TypeMod{}, sqlerr.Errorf(sqlerr.FeatureNotSupported, "NUMERIC scale %d must be between 0 and precision %d", s, p)
			}
			return TypeMod{Kind: ModNumeric, N: int32(p), Scale: int32(s)}, nil
		}
		return TypeMod{}, sqlerr.Errorf(sqlerr.SyntaxError, "invalid NUMERIC type modifier")
	}
	switch typeName(parts) {
	case "timestamp", "timestamptz", "date", "time", "interval":
		// timestamp(p) and the like: a precision, which
		// typeAndPrecision reads and checks; not a TypeMod.
		return TypeMod{}, nil
	}
	if len(mods) > 0 {
		return TypeMod{}, sqlerr.Errorf(sqlerr.SyntaxError, "type modifier is not allowed for type %q", typeName(parts))
	}
	return TypeMod{}, nil
}

// TableTypeMods returns the type modifiers of the columns of the table a
// CREATE TABLE statement creates, or nil when it declares none (or the
// text is not one).
func TableTypeMods(createTable string) []TypeMod {
	s := strings.ToLower(createTable)
	if !strings.Contains(s, "char") && !strings.Contains(s, "numeric") && !strings.Contains(s, "decimal") {
		return nil
	}
	c := parseCreateTable(createTable)
	if c == nil {
		return nil
	}
	out := make([]TypeMod, 0, len(c.TableElts))
	declared := false
	for _, elt := range c.TableElts {
		cd := elt.GetColumnDef()
		if cd == nil {
			continue // a table constraint
		}
		m, err := TypeModFromName(cd.TypeName)
		if err != nil {
			return nil
		}
		declared = declared || m.Kind != ModNone
		out = append(out, m)
	}
	if !declared {
		return nil
	}
	return out
}

// charMod is m when it is a varchar or char modifier, else none.
func charMod(m TypeMod) TypeMod {
	if m.Kind == ModVarchar || m.Kind == ModBpchar {
		return m
	}
	return TypeMod{}
}

// PGType returns the type OID and typmod (-1: none) a value of row type
// t, integer width w and modifier m is described with on the wire and in
// the catalog.
func PGType(t row.Type, w IntWidth, m TypeMod) (oid uint32, typmod int32) {
	switch m.Kind {
	case ModVarchar, ModBpchar:
		oid = oidVarchar
		if m.Kind == ModBpchar {
			oid = oidBpchar
		}
		if t == row.TypeTextArray {
			oid = oidVarcharArray
			if m.Kind == ModBpchar {
				oid = oidBpcharArray
			}
		}
		if m.N > 0 && !m.Unsized {
			return oid, m.N + 4
		}
		return oid, -1
	case ModNumeric:
		if m.N > 0 {
			return oidNumeric, (m.N<<16 | m.Scale) + 4
		}
		return oidNumeric, -1
	}
	if t.IsArray() {
		return arrayPGType(t, w), -1
	}
	switch t {
	case row.TypeBool:
		return 16, -1
	case row.TypeBytes:
		return 17, -1
	case row.TypeInt64:
		switch w {
		case IntWidth2:
			return 21, -1
		case IntWidth4:
			return 23, -1
		}
		return 20, -1
	case row.TypeFloat64:
		return 701, -1
	case row.TypeTimestamp:
		return 1114, -1
	case row.TypeDate:
		return 1082, -1
	case row.TypeTime:
		return 1083, -1
	case row.TypeTimestampTZ:
		return 1184, -1
	case row.TypeInterval:
		return 1186, -1
	case row.TypeNumeric:
		return oidNumeric, -1
	case row.TypeUUID:
		return 2950, -1
	case row.TypeJSONB:
		return 3802, -1
	case row.TypeJSON:
		return 114, -1
	case row.TypeRecord:
		return 2249, -1
	}
	return 25, -1
}

// AppendText appends d's text output as a value of modifier m: numerics
// with m's display scale, char(n) padded with spaces to n characters,
// other values as row.AppendTextIn shows them (timestamptz in loc).
func (m TypeMod) AppendText(dst []byte, d row.Datum, loc *time.Location) []byte {
	switch {
	case m.Kind == ModNumeric && d.Type() == row.TypeNumeric:
		return row.AppendNumeric(dst, d, int(m.Scale))
	case m.Kind == ModBpchar && m.N > 0 && d.Type() == row.TypeText:
		return padBpchar(dst, d.Text(), m.N)
	case m.Kind == ModBpchar && m.N > 0 && d.Type() == row.TypeTextArray:
		if padded, err := m.PadArray(d); err == nil {
			d = padded
		}
	}
	return row.AppendTextIn(dst, d, loc)
}

// padBpchar appends s padded with spaces to n characters.
func padBpchar(dst []byte, s string, n int32) []byte {
	dst = append(dst, s...)
	for k := utf8.RuneCountInString(s); k < int(n); k++ {
		dst = append(dst, ' ')
	}
	return dst
}

// PadArray returns a text[] value of a char(n)[] column with its elements
// padded to n characters, as PostgreSQL stores and shows them (Tandem
// stores char values without their trailing spaces); other values are
// returned as they are.
func (m TypeMod) PadArray(d row.Datum) (row.Datum, error) {
	if m.Kind != ModBpchar || m.N == 0 || d.Type() != row.TypeTextArray {
		return d, nil
	}
	elems := d.ArrayElems()
	out := make([]row.Datum, len(elems))
	for i, e := range elems {
		out[i] = e
		if !e.IsNull() {
			out[i] = row.Text(string(padBpchar(nil, e.Text(), m.N)))
		}
	}
	return row.Array(row.TypeTextArray, out)
}

// padCharArray is x with its elements padded when x is a char(n)[]
// value (bpchar_pad), for where PostgreSQL exposes an array's elements
// as text: a cast to text, array_to_string.
func padCharArray(x typed) typed {
	if x.t.Type == row.TypeTextArray && x.mod.Kind == ModBpchar && x.mod.N > 0 {
		x.e = expr.Call(expr.FuncBpcharPad, x.e, expr.Literal(row.Int64(int64(x.mod.N))))
		x.mod = TypeMod{}
	}
	return x
}

// convert applies modifier m to x: an explicit cast truncates to the
// length (char(n) and varchar(n)) or rounds to the scale (numeric(p,s));
// an assignment fails with 22001 when the value is too long unless the
// excess is spaces. x already has m's row type; a text[] has the rule
// applied to each element.
func convert(x typed, m TypeMod, explicit bool) typed {
	switch m.Kind {
	case ModVarchar, ModBpchar:
		if x.mod.Kind == m.Kind && x.mod.N != 0 && (m.N == 0 || x.mod.N <= m.N) {
			x.mod = m
			return x
		}
		f := expr.FuncVarcharAssign
		switch {
		case m.Kind == ModVarchar && explicit:
			f = expr.FuncVarchar
		case m.Kind == ModBpchar && explicit:
			f = expr.FuncBpchar
		case m.Kind == ModBpchar:
			f = expr.FuncBpcharAssign
		}
		x.e = expr.Call(f, x.e, expr.Literal(row.Int64(int64(m.N))))
	case ModNumeric:
		if m.N > 0 {
			x.e = expr.Call(expr.FuncNumericTypmod, x.e, expr.Literal(row.Int64(int64(m.N))), expr.Literal(row.Int64(int64(m.Scale))))
		}
	}
	x.mod = m
	return x
}

// AssignDatum applies modifier m to a value assigned to a column outside
// a plan (COPY FROM) as assignExpr does in one: 22001 for a value too
// long for varchar(n) or char(n), rounding and 22003 for numeric(p,s).
func (m TypeMod) AssignDatum(d row.Datum) (row.Datum, error) {
	if d.IsNull() || m.Kind == ModNone {
		return d, nil
	}
	x := convert(typed{e: expr.Literal(d), t: row.ColumnType{Type: d.Type()}}, m, false)
	return x.e.Eval(nil)
}

// displayScale is the numeric display scale of x when known: integers
// have scale 0, numerics the scale their modifier carries.
func displayScale(x typed) (int32, bool) {
	switch {
	case x.t.Type == row.TypeInt64:
		return 0, true
	case x.t.Type == row.TypeNumeric && x.mod.Kind == ModNumeric:
		return x.mod.Scale, true
	}
	return 0, false
}

// scaleMod returns the modifier of a numeric result whose display scale
// Postgres derives from its operands: +, - and % take the larger scale,
// * their sum (scales above 1000 are not tracked).
func scaleMod(f expr.Func, x, y typed) TypeMod {
	sx, ok1 := displayScale(x)
	sy, ok2 := displayScale(y)
	if !ok1 || !ok2 {
		return TypeMod{}
	}
	switch f {
	case expr.FuncAdd, expr.FuncSub, expr.FuncMod:
		return TypeMod{Kind: ModNumeric, Scale: max(sx, sy)}
	case expr.FuncMul:
		if sx+sy <= 1000 {
			return TypeMod{Kind: ModNumeric, Scale: sx + sy}
		}
	}
	return TypeMod{}
}

// numericCommon is the common type of two number types as Postgres
// resolves it (float8 over numeric over the integers); ok is false unless
// both are numbers.
func numericCommon(a, b row.Type) (row.Type, bool) {
	if !a.IsNumeric() || !b.IsNumeric() {
		return row.TypeInvalid, false
	}
	switch {
	case a == row.TypeFloat64 || b == row.TypeFloat64:
		return row.TypeFloat64, true
	case a == row.TypeNumeric || b == row.TypeNumeric:
		return row.TypeNumeric, true
	}
	return row.TypeInt64, true
}

// commonMod is the modifier of a value chosen among xs (VALUES rows,
// UNION branches): theirs when they all agree, else none (a numeric then
// prints its own digits).
func commonMod(xs []typed) TypeMod {
	var m TypeMod
	seen := false
	for _, x := range xs {
		if x.t.Type == row.TypeNull {
			continue
		}
		if seen && x.mod != m {
			return TypeMod{}
		}
		m, seen = x.mod, true
	}
	return m
}

// literalScale is the display scale of a decimal literal: its digits
// after the point, less its exponent.
func literalScale(s string) int32 {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		for _, c := range strings.TrimLeft(s[i+1:], "+-") {
			exp = exp*10 + int64(c-'0')
			if exp > 100000 {
				break
			}
		}
		if strings.HasPrefix(s[i+1:], "-") {
			exp = -exp
		}
	}
	frac := int64(0)
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = int64(len(mant) - i - 1)
	}
	return int32(min(max(frac-exp, 0), 1000))
}

// SQLTypeName is Postgres' name of the SQL type of a column of row type
// t, integer width w and modifier m ("integer", "character varying(30)",
// "numeric(10,2)"), as format_type prints it.
func SQLTypeName(t row.Type, w IntWidth, m TypeMod) string {
	if t == row.TypeTextArray && charMod(m).Kind != ModNone {
		return SQLTypeName(row.TypeText, 0, m) + "[]" // varchar(3)[], character(2)[]
	}
	switch m.Kind {
	case ModVarchar, ModBpchar:
		name := "character varying"
		if m.Kind == ModBpchar {
			name = "character"
			if m.N == 0 {
				return "bpchar"
			}
		}
		if m.N > 0 {
			return fmt.Sprintf("%s(%d)", name, m.N)
		}
		return name
	case ModNumeric:
		if m.N > 0 {
			return fmt.Sprintf("numeric(%d,%d)", m.N, m.Scale)
		}
	}
	switch t {
	case row.TypeInt64:
		return intWidthName(w)
	case row.TypeInt64Array:
		return intWidthName(w) + "[]"
	}
	return t.PGName()
}
