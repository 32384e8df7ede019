package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The table functions that turn json objects into rows of the columns a
// query's column definition list names (jsonb_to_record(j) AS x(a int,
// b text)): each column is the text of the object's member of its name
// (a string's text, or with raw set the member as written, for json and
// jsonb columns), NULL for a missing member or json null; the SQL layer
// casts the text to the column's type as PostgreSQL's input functions
// would. The arguments are the document, then per column its name (a
// text literal) and raw (a bool literal).
const (
	TableJSONBToRecord    TableFunc = "jsonb_to_record"
	TableJSONBToRecordset TableFunc = "jsonb_to_recordset"
	TableJSONToRecord     TableFunc = "json_to_record"
	TableJSONToRecordset  TableFunc = "json_to_recordset"
)

// recordField is one column of a json-to-record call.
type recordField struct {
	name string
	raw  bool
}

func typeJSONRecord(doc row.Type) func([]row.Type) ([]row.ColumnType, error) {
	return func(args []row.Type) ([]row.ColumnType, error) {
		if len(args) < 3 || len(args)%2 != 1 || args[0] != doc && args[0] != row.TypeNull {
			return nil, evalErr(CodeUndefinedFunction, "function does not exist: json record function(%s)", typeList(args))
		}
		out := make([]row.ColumnType, 0, len(args)/2)
		for i := 1; i < len(args); i += 2 {
			if args[i] != row.TypeText || args[i+1] != row.TypeBool {
				return nil, evalErr(CodeUndefinedFunction, "function does not exist: json record function(%s)", typeList(args))
			}
			out = append(out, row.ColumnType{Type: row.TypeText, Nullable: true})
		}
		return out, nil
	}
}

// recordFields decodes the column arguments after the document.
func recordFields(args []row.Datum) []recordField {
	fs := make([]recordField, 0, len(args)/2)
	for i := 1; i+1 < len(args); i += 2 {
		fs = append(fs, recordField{name: args[i].Text(), raw: args[i+1].Bool()})
	}
	return fs
}

// jsonbRecord is jsonb_to_record (set false) and jsonb_to_recordset: a
// NULL document is one row of NULLs for the first, no rows for the
// second, as in PostgreSQL.
func jsonbRecord(set bool) func([]row.Datum, func([]row.Datum) error) error {
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		fs := recordFields(args)
		if args[0].IsNull() {
			return nullRecord(set, len(fs), emit)
		}
		j := args[0].JSON()
		if !set {
			if err := jsonbRecordKind(j); err != nil {
				return err
			}
			return emit(jsonbFields(j, fs))
		}
		if j.Kind != row.JSONArray {
			return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call jsonb_to_recordset on a non-array"}
		}
		for _, e := range j.Elems {
			if e.Kind != row.JSONObject {
				return &EvalError{Code: CodeInvalidParameterValue, Msg: "argument of jsonb_to_recordset must be an array of objects"}
			}
			if err := emit(jsonbFields(e, fs)); err != nil {
				return err
			}
		}
		return nil
	}
}

func nullRecord(set bool, n int, emit func([]row.Datum) error) error {
	if set {
		return nil
	}
	out := make([]row.Datum, n)
	for i := range out {
		out[i] = row.Null()
	}
	return emit(out)
}

func jsonbRecordKind(j row.JSON) error {
	switch j.Kind {
	case row.JSONObject:
		return nil
	case row.JSONArray:
		return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call populate_composite on an array"}
	}
	return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call populate_composite on a scalar"}
}

// jsonbFields is the row of fs's members of the object j.
func jsonbFields(j row.JSON, fs []recordField) []row.Datum {
	out := make([]row.Datum, len(fs))
	for i, f := range fs {
		out[i] = row.Null()
		for k, key := range j.Keys {
			if key != f.name || j.Vals[k].Kind == row.JSONNull {
				continue
			}
			out[i] = jsonText(j.Vals[k])
			if f.raw {
				out[i] = row.Text(j.Vals[k].String())
			}
		}
	}
	return out
}

// jsonTextRecord is json_to_record and json_to_recordset over json as
// written: a repeated key's last member wins, as in PostgreSQL.
func jsonTextRecord(set bool) func([]row.Datum, func([]row.Datum) error) error {
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		fs := recordFields(args)
		if args[0].IsNull() {
			return nullRecord(set, len(fs), emit)
		}
		doc := args[0].JSONText()
		if !set {
			return jsonTextRecordRow(doc, fs, "cannot call populate_composite on an array", "cannot call populate_composite on a scalar", emit)
		}
		elems, kind, err := jsonTextElems(doc)
		switch {
		case err != nil:
			return err
		case kind != "array":
			return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call json_to_recordset on a non-array"}
		}
		const notObjects = "argument of json_to_recordset must be an array of objects"
		for _, e := range elems {
			if err := jsonTextRecordRow(e, fs, notObjects, notObjects, emit); err != nil {
				return err
			}
		}
		return nil
	}
}

func jsonTextRecordRow(doc string, fs []recordField, onArray, onScalar string, emit func([]row.Datum) error) error {
	members, err := jsonTextObject(doc, onArray, onScalar)
	if err != nil {
		return err
	}
	out := make([]row.Datum, len(fs))
	for i, f := range fs {
		out[i] = row.Null()
		for _, m := range members {
			if m.key != f.name {
				continue
			}
			if out[i], err = jsonTextValue(m.raw); err != nil {
				return err
			}
			if f.raw && !out[i].IsNull() {
				out[i] = row.Text(m.raw)
			}
		}
	}
	return emit(out)
}
