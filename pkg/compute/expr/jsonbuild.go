package expr

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The json construction functions write PostgreSQL's json text:
// json_build_object's {"k" : v, ...}, json_build_array's and json_agg's
// [a, b], json_object_agg's { "k" : v, ... }. A value's text is its
// to_jsonb form (ToJSON) except where json keeps what jsonb normalises:
// a json value is inserted as written and a float keeps its float8
// output (1e+20).

// typeToJSON accepts what to_json converts: every scalar type but
// timestamptz (its text is in the session's zone) and arrays, which
// Tandem's json does not build yet.
func typeToJSON(args []row.ColumnType) (row.ColumnType, error) {
	for _, a := range args {
		if a.Type.IsArray() {
			return row.ColumnType{}, evalErr(CodeFeatureNotSupported, "arrays in json values are not supported")
		}
	}
	if _, err := typeToJSONB(args); err != nil {
		return row.ColumnType{}, err
	}
	return row.ColumnType{Type: row.TypeJSON}, nil
}

// typeJSONValueText types json_value_text and json_pair_text: text, never
// NULL.
func typeJSONValueText(args []row.ColumnType) (row.ColumnType, error) {
	if _, err := typeToJSON(args); err != nil {
		return row.ColumnType{}, err
	}
	return row.ColumnType{Type: row.TypeText}, nil
}

// appendJSONValue appends d's json text; NULL is null.
func appendJSONValue(dst []byte, d row.Datum) ([]byte, error) {
	switch d.Type() {
	case row.TypeJSON:
		return append(dst, d.JSONText()...), nil
	case row.TypeJSONB:
		return d.JSON().AppendText(dst), nil
	}
	j, err := ToJSON(d)
	if err != nil {
		return dst, err
	}
	if d.Type() == row.TypeFloat64 && j.Kind == row.JSONNumber {
		return append(dst, d.String()...), nil
	}
	return j.AppendText(dst), nil
}

// appendJSONKey appends d as an object key: always a string, "1" for 1;
// NULL keys and json, jsonb or array keys fail with 22023.
func appendJSONKey(dst []byte, d row.Datum, nullMsg string) ([]byte, error) {
	switch t := d.Type(); {
	case t == row.TypeNull:
		return dst, &EvalError{Code: CodeInvalidParameterValue, Msg: nullMsg}
	case t == row.TypeJSON || t == row.TypeJSONB || t.IsArray():
		return dst, &EvalError{Code: CodeInvalidParameterValue, Msg: "key value must be scalar, not array, composite, or json"}
	}
	j, err := ToJSON(d)
	if err != nil {
		return dst, err
	}
	if j.Kind == row.JSONString {
		return row.AppendJSONString(dst, j.Str), nil
	}
	v, err := appendJSONValue(nil, d)
	if err != nil {
		return dst, err
	}
	return row.AppendJSONString(dst, string(v)), nil
}

func evalToJSON(a row.Datum) (row.Datum, error) {
	b, err := appendJSONValue(nil, a)
	if err != nil {
		return row.Null(), err
	}
	return row.JSONText(string(b)), nil
}

func evalJSONTextBuildArray(args []row.Datum) (row.Datum, error) {
	b := []byte{'['}
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		var err error
		if b, err = appendJSONValue(b, a); err != nil {
			return row.Null(), err
		}
	}
	return row.JSONText(string(append(b, ']'))), nil
}

func evalJSONTextBuildObject(args []row.Datum) (row.Datum, error) {
	if len(args)%2 != 0 {
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "argument list must have even number of elements"}
	}
	b := []byte{'{'}
	for i := 0; i < len(args); i += 2 {
		if i > 0 {
			b = append(b, ", "...)
		}
		var err error
		if b, err = appendJSONKey(b, args[i], "argument "+strconv.Itoa(i+1)+" cannot be null"); err != nil {
			return row.Null(), err
		}
		if b, err = appendJSONValue(append(b, " : "...), args[i+1]); err != nil {
			return row.Null(), err
		}
	}
	return row.JSONText(string(append(b, '}'))), nil
}

// jsonTextElems splits a json array's text into its elements as written;
// kind is the document's json_typeof.
func jsonTextElems(doc string) (elems []string, kind string, err error) {
	kind = jsonTextKind(doc)
	if kind != "array" {
		return nil, kind, nil
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return nil, kind, evalErr(CodeInvalidTextRepr, "json array: %v", err)
	}
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, kind, evalErr(CodeInvalidTextRepr, "json array: %v", err)
		}
		elems = append(elems, string(v))
	}
	return elems, kind, nil
}

func evalJSONTextArrayLength(a row.Datum) (row.Datum, error) {
	elems, kind, err := jsonTextElems(a.JSONText())
	switch {
	case err != nil:
		return row.Null(), err
	case kind == "object":
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot get array length of a non-array"}
	case kind != "array":
		return row.Null(), &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot get array length of a scalar"}
	}
	return row.Int64(int64(len(elems))), nil
}

func evalJSONValueText(a row.Datum) (row.Datum, error) {
	b, err := appendJSONValue(nil, a)
	if err != nil {
		return row.Null(), err
	}
	return row.Text(string(b)), nil
}

func evalJSONPairText(k, v row.Datum) (row.Datum, error) {
	b, err := appendJSONKey(nil, k, "field name must not be null")
	if err != nil {
		return row.Null(), err
	}
	if b, err = appendJSONValue(append(b, " : "...), v); err != nil {
		return row.Null(), err
	}
	return row.Text(string(b)), nil
}

// evalJSONAggFinal joins a jsonb array of json texts (json_value_text or
// json_pair_text results) as json_agg, or with object as
// json_object_agg, prints them.
func evalJSONAggFinal(a, object row.Datum) (row.Datum, error) {
	j := a.JSON()
	open, end := "[", "]"
	if object.Bool() {
		open, end = "{ ", " }"
	}
	var b strings.Builder
	b.WriteString(open)
	for i, e := range j.Elems {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Str)
	}
	b.WriteString(end)
	return row.JSONText(b.String()), nil
}

func typeJSONTextTable(cols ...row.ColumnType) func([]row.Type) ([]row.ColumnType, error) {
	return func(args []row.Type) ([]row.ColumnType, error) {
		if len(args) != 1 || args[0] != row.TypeJSON && args[0] != row.TypeNull {
			return nil, evalErr(CodeUndefinedFunction, "function does not exist: json table function(%s)", typeList(args))
		}
		return cols, nil
	}
}

// jsonTextElements is json_array_elements(_text): each element of a json
// array as written (as text: a string's text, NULL for null).
func jsonTextElements(asText bool) func([]row.Datum, func([]row.Datum) error) error {
	name := "json_array_elements"
	if asText {
		name = "json_array_elements_text"
	}
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		elems, kind, err := jsonTextElems(args[0].JSONText())
		switch {
		case err != nil:
			return err
		case kind == "object":
			return evalErr(CodeInvalidParameterValue, "cannot call %s on a non-array", name)
		case kind != "array":
			return evalErr(CodeInvalidParameterValue, "cannot call %s on a scalar", name)
		}
		out := make([]row.Datum, 1)
		for _, e := range elems {
			out[0] = row.JSONText(e)
			if asText {
				if out[0], err = jsonTextValue(e); err != nil {
					return err
				}
			}
			if err := emit(out); err != nil {
				return err
			}
		}
		return nil
	}
}
