package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// json_object and jsonb_object build an object of text keys and text
// values from text arrays: json_object(a) from alternating keys and
// values, json_object(keys, values) from two arrays of one length.
// Values are strings (NULL is null); a NULL key is 22004, an odd count
// or mismatched lengths 2202E, as in PostgreSQL.

// codeArraySubscript is PostgreSQL's array_subscript_error.
const codeArraySubscript = "2202E"

func typeJSONObjectOf(out row.Type) func([]row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		for _, a := range args {
			if a.Type != row.TypeTextArray && a.Type != row.TypeNull {
				return row.ColumnType{}, evalErr(CodeUndefinedFunction, "function %s_object(%s) does not exist", out, a.Type)
			}
		}
		return row.ColumnType{Type: out}, nil
	}
}

// jsonObjectPairs is the keys and values of json_object's arguments.
func jsonObjectPairs(args []row.Datum) (keys, vals []row.Datum, err error) {
	if len(args) == 1 {
		elems := args[0].ArrayElems()
		if len(elems)%2 != 0 {
			return nil, nil, &EvalError{Code: codeArraySubscript, Msg: "array must have even number of elements"}
		}
		for i := 0; i < len(elems); i += 2 {
			keys, vals = append(keys, elems[i]), append(vals, elems[i+1])
		}
	} else {
		keys, vals = args[0].ArrayElems(), args[1].ArrayElems()
		if len(keys) != len(vals) {
			return nil, nil, &EvalError{Code: codeArraySubscript, Msg: "mismatched array dimensions"}
		}
	}
	for _, k := range keys {
		if k.IsNull() {
			return nil, nil, &EvalError{Code: CodeNullValueNotAllowed, Msg: "null value not allowed for object key"}
		}
	}
	return keys, vals, nil
}

// evalJSONObject prints json_object's text: {"k" : "v", "k2" : null},
// keys in the arrays' order, duplicates kept.
func evalJSONObject(args []row.Datum) (row.Datum, error) {
	keys, vals, err := jsonObjectPairs(args)
	if err != nil {
		return row.Null(), err
	}
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(row.AppendJSONString(b, k.Text()), " : "...)
		if vals[i].IsNull() {
			b = append(b, "null"...)
		} else {
			b = row.AppendJSONString(b, vals[i].Text())
		}
	}
	return row.JSONText(string(append(b, '}'))), nil
}

// evalJSONBObject is jsonb_object: the same pairs as a jsonb object (the
// last of repeated keys wins).
func evalJSONBObject(args []row.Datum) (row.Datum, error) {
	keys, vals, err := jsonObjectPairs(args)
	if err != nil {
		return row.Null(), err
	}
	pairs := make([]row.Datum, 0, 2*len(keys))
	for i, k := range keys {
		pairs = append(pairs, k, vals[i])
	}
	return evalJSONBuildObject(pairs)
}
