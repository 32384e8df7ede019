package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

const (
	// regexp_split_to_table(s, pattern[, flags]) is the pieces of s
	// between the matches of pattern (column regexp_split_to_table);
	// flag 'g' is 22023.
	TableRegexpSplit TableFunc = "regexp_split_to_table"
	// generate_subscripts(a, dim[, reverse]) is the subscripts of a's
	// dimension dim (1..n, or n..1 when reverse is true): none for an
	// empty array or another dimension, Tandem's arrays having one.
	TableGenerateSubscripts TableFunc = "generate_subscripts"
)

func typeRegexpSplit(args []row.Type) ([]row.ColumnType, error) {
	return typeRegexpTable("regexp_split_to_table", args, row.TypeText)
}

// evalRegexpSplit splits as PostgreSQL does: a match counts unless it
// starts at the end of s or ends no later than the previous match (an
// empty match at the start, or right after a match); s is one piece
// when nothing matches, the empty string too.
func evalRegexpSplit(args []row.Datum, emit func([]row.Datum) error) error {
	flags := ""
	if len(args) == 3 {
		flags = args[2].Text()
	}
	re, _, err := compileRegex("regexp_split_to_table", args[1].Text(), flags, false)
	if err != nil {
		return err
	}
	s := args[0].Text()
	out := make([]row.Datum, 1)
	start, prevEnd := 0, 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		so, eo := m[0], m[1]
		if so >= len(s) || eo <= prevEnd {
			continue
		}
		out[0] = row.Text(s[start:so])
		if err := emit(out); err != nil {
			return err
		}
		start, prevEnd = eo, eo
	}
	out[0] = row.Text(s[start:])
	return emit(out)
}

func typeGenerateSubscripts(args []row.Type) ([]row.ColumnType, error) {
	if len(args) < 2 || len(args) > 3 || !args[0].IsArray() && args[0] != row.TypeNull ||
		args[1] != row.TypeInt64 && args[1] != row.TypeNull || len(args) == 3 && args[2] != row.TypeBool && args[2] != row.TypeNull {
		return nil, evalErr(CodeUndefinedFunction, "function generate_subscripts(%s) does not exist", typeList(args))
	}
	return []row.ColumnType{{Type: row.TypeInt64}}, nil
}

func evalGenerateSubscripts(args []row.Datum, emit func([]row.Datum) error) error {
	n := args[0].ArrayLen()
	if args[1].Int64() != 1 || n == 0 {
		return nil
	}
	reverse := len(args) == 3 && args[2].Bool()
	out := make([]row.Datum, 1)
	for i := 1; i <= n; i++ {
		out[0] = row.Int64(int64(i))
		if reverse {
			out[0] = row.Int64(int64(n + 1 - i))
		}
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}
