package expr

import (
	"fmt"
	"math"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TableFunc names a table function: a function in FROM that returns a set
// of rows for each row of its input (plan.FlatMap).
type TableFunc string

// The table functions. Each is strict: a NULL argument yields no rows,
// as in PostgreSQL.
const (
	// generate_series(start, stop[, step]) over int64 (step defaults to
	// 1); generate_series(start, stop, step interval) over timestamp; and
	// generate_series(start, stop, step interval, zone text) over
	// timestamptz, whose day and month steps are calendar steps in zone
	// (the SQL layer passes the session's TimeZone).
	TableGenerateSeries TableFunc = "generate_series"
	// jsonb_array_elements(j) is each element of an array (column
	// value), jsonb_array_elements_text as text; jsonb_each(j) each pair
	// of an object (columns key, value), jsonb_each_text with text
	// values. Other kinds of jsonb fail with 22023.
	TableJSONArrayElements     TableFunc = "jsonb_array_elements"
	TableJSONArrayElementsText TableFunc = "jsonb_array_elements_text"
	TableJSONEach              TableFunc = "jsonb_each"
	TableJSONEachText          TableFunc = "jsonb_each_text"
	// unnest(a) is each element of a one-dimensional array, in order
	// (column unnest, NULL for a NULL element).
	TableUnnest TableFunc = "unnest"
	// regexp_matches(s, pattern[, flags]) is the text[] regexp_match
	// gives for the first match, or with flag 'g' for every match (column
	// regexp_matches); no rows without a match.
	TableRegexpMatches TableFunc = "regexp_matches"
	// json_array_elements(j) and json_array_elements_text(j) are the
	// elements of a json array as written (jsonbuild.go).
	TableJSONTextArrayElements     TableFunc = "json_array_elements"
	TableJSONTextArrayElementsText TableFunc = "json_array_elements_text"
)

// MaxTableFuncRows bounds the rows one call of a table function may
// produce: a dataflow holds a call's rows in memory, so an unbounded
// series (generate_series to 'infinity') fails with 54000 rather than
// exhausting the replica. PostgreSQL has no such limit.
const MaxTableFuncRows = 1 << 24

// TableCall is a table function applied to argument expressions over the
// input row.
type TableCall struct {
	Func TableFunc `json:"func"`
	Args []Expr    `json:"args"`
}

// String renders the call as "generate_series(#0, 3)".
func (c TableCall) String() string {
	if c.Func == TableRowsFrom {
		return rowsFromString(c.Args)
	}
	s := string(c.Func) + "("
	for i, a := range c.Args {
		if i > 0 {
			s += ", "
		}
		s += a.String()
	}
	return s + ")"
}

// OutputTypes type-checks the call over input and returns the types of
// the columns each produced row has.
func (c TableCall) OutputTypes(input []row.ColumnType) ([]row.ColumnType, error) {
	if c.Func == TableRowsFrom {
		return rowsFromTypes(c.Args, input)
	}
	args := make([]row.Type, len(c.Args))
	for i := range c.Args {
		t, err := c.Args[i].Type(input)
		if err != nil {
			return nil, fmt.Errorf("%s argument %d: %w", c.Func, i+1, err)
		}
		args[i] = t.Type
	}
	def, ok := tableFuncs[c.Func]
	if !ok {
		return nil, evalErr(CodeUndefinedFunction, "table function %s does not exist", c.Func)
	}
	return def.typeOf(args)
}

// PreparedCall is a table call ready to evaluate over many input rows:
// a rows_from call's packed arguments are decoded once.
type PreparedCall struct {
	call TableCall
	rf   *rowsFrom
	err  error
}

// Prepare readies c for evaluation; a malformed rows_from call is
// reported by each Eval (the input rows fail, as any call's would).
func (c TableCall) Prepare() PreparedCall {
	p := PreparedCall{call: c}
	if c.Func == TableRowsFrom {
		calls, widths, err := rowsFromCalls(c.Args)
		p.rf, p.err = &rowsFrom{calls: calls, widths: widths}, err
	}
	return p
}

// Eval is TableCall.Eval of the prepared call.
func (p PreparedCall) Eval(datums []row.Datum, emit func([]row.Datum) error) error {
	switch {
	case p.err != nil:
		return p.err
	case p.rf != nil:
		// Each call is strict on its own: a NULL argument ends only it.
		return p.rf.eval(datums, emit)
	}
	return p.call.eval(datums, emit)
}

// Eval evaluates the arguments over datums and calls emit with each row
// the function produces (emit must copy the slice to keep it). A NULL
// argument produces no rows, unless the function takes NULLs. Over many
// rows, Prepare once and evaluate the PreparedCall.
func (c TableCall) Eval(datums []row.Datum, emit func([]row.Datum) error) error {
	return c.Prepare().Eval(datums, emit)
}

// eval evaluates a call other than rows_from.
func (c TableCall) eval(datums []row.Datum, emit func([]row.Datum) error) error {
	def, ok := tableFuncs[c.Func]
	if !ok {
		return evalErr(CodeUndefinedFunction, "table function %s does not exist", c.Func)
	}
	args := make([]row.Datum, len(c.Args))
	for i := range c.Args {
		d, err := c.Args[i].Eval(datums)
		if err != nil {
			return err
		}
		if d.IsNull() && !def.takesNull {
			return nil
		}
		args[i] = d
	}
	// Check the arguments' types, so that a malformed call is an error
	// and never a panic (the invariant of package expr).
	types := make([]row.Type, len(args))
	for i, d := range args {
		types[i] = d.Type()
	}
	if _, err := def.typeOf(types); err != nil {
		return err
	}
	n := 0
	return def.eval(args, func(out []row.Datum) error {
		if n++; n > MaxTableFuncRows {
			return evalErr(CodeProgramLimitExceeded, "%s would produce more than %d rows", c.Func, MaxTableFuncRows)
		}
		return emit(out)
	})
}

type tableFuncDef struct {
	typeOf func(args []row.Type) ([]row.ColumnType, error)
	eval   func(args []row.Datum, emit func([]row.Datum) error) error
	// takesNull is set for a function that is not strict: eval gets NULL
	// arguments (jsonb_to_record(NULL) is a row of NULLs).
	takesNull bool
}

var tableFuncs = map[TableFunc]tableFuncDef{
	TableGenerateSeries:        {typeOf: typeGenerateSeries, eval: evalGenerateSeries},
	TableJSONArrayElements:     {typeOf: typeJSONTable(row.ColumnType{Type: row.TypeJSONB}), eval: jsonElements(false)},
	TableJSONArrayElementsText: {typeOf: typeJSONTable(row.ColumnType{Type: row.TypeText, Nullable: true}), eval: jsonElements(true)},
	TableJSONEach:              {typeOf: typeJSONTable(row.ColumnType{Type: row.TypeText}, row.ColumnType{Type: row.TypeJSONB}), eval: jsonEach(false)},
	TableJSONEachText:          {typeOf: typeJSONTable(row.ColumnType{Type: row.TypeText}, row.ColumnType{Type: row.TypeText, Nullable: true}), eval: jsonEach(true)},
	TableUnnest:                {typeOf: typeUnnest, eval: evalUnnest},
	TableRegexpMatches:         {typeOf: typeRegexpMatches, eval: evalRegexpMatches},

	TableJSONTextArrayElements:     {typeOf: typeJSONTextTable(row.ColumnType{Type: row.TypeJSON}), eval: jsonTextElements(false)},
	TableJSONTextArrayElementsText: {typeOf: typeJSONTextTable(row.ColumnType{Type: row.TypeText, Nullable: true}), eval: jsonTextElements(true)},

	TableJSONTextEach:       {typeOf: typeJSONTextTable(row.ColumnType{Type: row.TypeText}, row.ColumnType{Type: row.TypeJSON}), eval: jsonTextEach(false)},
	TableJSONTextEachText:   {typeOf: typeJSONTextTable(row.ColumnType{Type: row.TypeText}, row.ColumnType{Type: row.TypeText, Nullable: true}), eval: jsonTextEach(true)},
	TableJSONTextObjectKeys: {typeOf: typeJSONTextTable(row.ColumnType{Type: row.TypeText}), eval: evalJSONTextObjectKeys},
	TableJSONObjectKeys:     {typeOf: typeJSONTable(row.ColumnType{Type: row.TypeText}), eval: evalJSONObjectKeys},

	TableRegexpSplit:        {typeOf: typeRegexpSplit, eval: evalRegexpSplit},
	TableGenerateSubscripts: {typeOf: typeGenerateSubscripts, eval: evalGenerateSubscripts},

	TableJSONBToRecord:    {typeOf: typeJSONRecord(row.TypeJSONB), eval: jsonbRecord(false), takesNull: true},
	TableJSONBToRecordset: {typeOf: typeJSONRecord(row.TypeJSONB), eval: jsonbRecord(true), takesNull: true},
	TableJSONToRecord:     {typeOf: typeJSONRecord(row.TypeJSON), eval: jsonTextRecord(false), takesNull: true},
	TableJSONToRecordset:  {typeOf: typeJSONRecord(row.TypeJSON), eval: jsonTextRecord(true), takesNull: true},
}

func typeJSONTable(cols ...row.ColumnType) func([]row.Type) ([]row.ColumnType, error) {
	return func(args []row.Type) ([]row.ColumnType, error) {
		if len(args) != 1 || args[0] != row.TypeJSONB && args[0] != row.TypeNull {
			return nil, evalErr(CodeUndefinedFunction, "function does not exist: jsonb table function(%s)", typeList(args))
		}
		return cols, nil
	}
}

func jsonElements(asText bool) func([]row.Datum, func([]row.Datum) error) error {
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		j := args[0].JSON()
		switch j.Kind {
		case row.JSONObject:
			return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot extract elements from an object"}
		case row.JSONArray:
		default:
			return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot extract elements from a scalar"}
		}
		out := make([]row.Datum, 1)
		for _, e := range j.Elems {
			out[0] = row.JSONB(e)
			if asText {
				out[0] = jsonText(e)
			}
			if err := emit(out); err != nil {
				return err
			}
		}
		return nil
	}
}

func jsonEach(asText bool) func([]row.Datum, func([]row.Datum) error) error {
	name := "jsonb_each"
	if asText {
		name = "jsonb_each_text"
	}
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		j := args[0].JSON()
		if j.Kind != row.JSONObject {
			return evalErr(CodeInvalidParameterValue, "cannot call %s on a non-object", name)
		}
		out := make([]row.Datum, 2)
		for i, k := range j.Keys {
			out[0], out[1] = row.Text(k), row.JSONB(j.Vals[i])
			if asText {
				out[1] = jsonText(j.Vals[i])
			}
			if err := emit(out); err != nil {
				return err
			}
		}
		return nil
	}
}

func nonNull(t row.Type) []row.ColumnType { return []row.ColumnType{{Type: t}} }

func typeGenerateSeries(args []row.Type) ([]row.ColumnType, error) {
	switch {
	case (len(args) == 2 || len(args) == 3) && allOf(args, row.TypeInt64):
		return nonNull(row.TypeInt64), nil
	case len(args) == 3 && args[0] == row.TypeTimestamp && args[1] == row.TypeTimestamp && args[2] == row.TypeInterval:
		return nonNull(row.TypeTimestamp), nil
	case len(args) == 4 && args[0] == row.TypeTimestampTZ && args[1] == row.TypeTimestampTZ &&
		args[2] == row.TypeInterval && args[3] == row.TypeText:
		return nonNull(row.TypeTimestampTZ), nil
	}
	return nil, evalErr(CodeUndefinedFunction, "function generate_series(%s) does not exist", typeList(args))
}

func allOf(ts []row.Type, t row.Type) bool {
	for _, x := range ts {
		if x != t && x != row.TypeNull {
			return false
		}
	}
	return true
}

func typeList(ts []row.Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}

var errZeroStep = &EvalError{Code: CodeInvalidParameterValue, Msg: "step size cannot equal zero"}

func evalGenerateSeries(args []row.Datum, emit func([]row.Datum) error) error {
	if args[0].Type() == row.TypeInt64 {
		step := int64(1)
		if len(args) == 3 {
			step = args[2].Int64()
		}
		return seriesInt(args[0].Int64(), args[1].Int64(), step, emit)
	}
	return seriesTimestamp(args, emit)
}

// seriesInt counts from start to stop by step; like PostgreSQL it stops
// (without error) where the next value would overflow.
func seriesInt(start, stop, step int64, emit func([]row.Datum) error) error {
	if step == 0 {
		return errZeroStep
	}
	if n := seriesLen(start, stop, step); n > MaxTableFuncRows {
		return evalErr(CodeProgramLimitExceeded, "generate_series would produce more than %d rows", MaxTableFuncRows)
	}
	out := make([]row.Datum, 1)
	for v := start; (step > 0 && v <= stop) || (step < 0 && v >= stop); {
		out[0] = row.Int64(v)
		if err := emit(out); err != nil {
			return err
		}
		next, ok := addChecked(v, step)
		if !ok {
			return nil
		}
		v = next
	}
	return nil
}

// seriesLen is how many values seriesInt produces (step is not zero),
// computed in unsigned arithmetic so that no span overflows.
func seriesLen(start, stop, step int64) uint64 {
	var q uint64
	switch {
	case step > 0 && stop >= start:
		q = (uint64(stop) - uint64(start)) / uint64(step)
	case step < 0 && stop <= start:
		q = (uint64(start) - uint64(stop)) / (uint64(-(step + 1)) + 1)
	default:
		return 0
	}
	return min(q, math.MaxUint64-1) + 1
}

// seriesTimestamp steps a timestamp (wall clock) or a timestamptz
// (calendar steps in the zone of args[3]) by an interval.
func seriesTimestamp(args []row.Datum, emit func([]row.Datum) error) error {
	step := args[2].Interval()
	sign := step.CompareLength(row.Interval{})
	if sign == 0 {
		return errZeroStep
	}
	tz := args[0].Type() == row.TypeTimestampTZ
	start, stop := args[0].Timestamp(), args[1].Timestamp()
	add := func(us int64) (int64, error) { return timestampPlusInterval(us, step) }
	mk := row.Timestamp
	if tz {
		loc, err := zoneArg(args[3])
		if err != nil {
			return err
		}
		start, stop = args[0].TimestampTZ(), args[1].TimestampTZ()
		add = func(us int64) (int64, error) { return timestampTZPlusInterval(us, step, loc) }
		mk = row.TimestampTZ
	}
	out := make([]row.Datum, 1)
	for v := start; (sign > 0 && v <= stop) || (sign < 0 && v >= stop); {
		out[0] = mk(v)
		if err := emit(out); err != nil {
			return err
		}
		next, err := add(v)
		if err != nil {
			return err
		}
		if next == v {
			// An infinite start never moves: PostgreSQL loops forever.
			return evalErr(CodeProgramLimitExceeded, "generate_series would produce more than %d rows", MaxTableFuncRows)
		}
		v = next
	}
	return nil
}
