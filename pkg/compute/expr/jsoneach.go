package expr

import (
	"encoding/json"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The table functions that take an object apart: json_each(_text) over a
// json document (its members as written, duplicates kept, in document
// order), json_object_keys and jsonb_object_keys (registered in
// tablefunc.go's tableFuncs).

const (
	// json_each(j) and json_each_text(j) are the members of a json
	// object as written (columns key, value); 22023 on an array or a
	// scalar.
	TableJSONTextEach     TableFunc = "json_each"
	TableJSONTextEachText TableFunc = "json_each_text"
	// json_object_keys(j) and jsonb_object_keys(j) are an object's keys
	// (column json_object_keys or jsonb_object_keys): json's as written,
	// jsonb's in storage order; 22023 on an array or a scalar.
	TableJSONTextObjectKeys TableFunc = "json_object_keys"
	TableJSONObjectKeys     TableFunc = "jsonb_object_keys"
)

// jsonTextMember is one member of a json object: its decoded key and
// its value's text as written.
type jsonTextMember struct {
	key string
	raw string
}

// jsonTextMembers splits a json object's text into its members; kind is
// the document's json_typeof (members is nil unless it is "object").
func jsonTextMembers(doc string) (members []jsonTextMember, kind string, err error) {
	kind = jsonTextKind(doc)
	if kind != "object" {
		return nil, kind, nil
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return nil, kind, evalErr(CodeInvalidTextRepr, "json object: %v", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, kind, evalErr(CodeInvalidTextRepr, "json object: %v", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, kind, evalErr(CodeInvalidTextRepr, "json object: %v", err)
		}
		members = append(members, jsonTextMember{key: key, raw: string(v)})
	}
	return members, kind, nil
}

// jsonTextObject is the members of the json object doc, or fn's
// PostgreSQL error for an array (onArray) or a scalar (onScalar).
func jsonTextObject(doc, onArray, onScalar string) ([]jsonTextMember, error) {
	members, kind, err := jsonTextMembers(doc)
	switch {
	case err != nil:
		return nil, err
	case kind == "array":
		return nil, &EvalError{Code: CodeInvalidParameterValue, Msg: onArray}
	case kind != "object":
		return nil, &EvalError{Code: CodeInvalidParameterValue, Msg: onScalar}
	}
	return members, nil
}

// jsonTextEach is json_each (values json as written) and json_each_text
// (values as ->> gives them: a string's text, NULL for null).
func jsonTextEach(asText bool) func([]row.Datum, func([]row.Datum) error) error {
	return func(args []row.Datum, emit func([]row.Datum) error) error {
		members, err := jsonTextObject(args[0].JSONText(), "cannot deconstruct an array as an object", "cannot deconstruct a scalar")
		if err != nil {
			return err
		}
		out := make([]row.Datum, 2)
		for _, m := range members {
			out[0], out[1] = row.Text(m.key), row.JSONText(m.raw)
			if asText {
				if out[1], err = jsonTextValue(m.raw); err != nil {
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

func evalJSONTextObjectKeys(args []row.Datum, emit func([]row.Datum) error) error {
	members, err := jsonTextObject(args[0].JSONText(), "cannot call json_object_keys on an array", "cannot call json_object_keys on a scalar")
	if err != nil {
		return err
	}
	out := make([]row.Datum, 1)
	for _, m := range members {
		out[0] = row.Text(m.key)
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}

func evalJSONObjectKeys(args []row.Datum, emit func([]row.Datum) error) error {
	j := args[0].JSON()
	switch j.Kind {
	case row.JSONObject:
	case row.JSONArray:
		return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call jsonb_object_keys on an array"}
	default:
		return &EvalError{Code: CodeInvalidParameterValue, Msg: "cannot call jsonb_object_keys on a scalar"}
	}
	out := make([]row.Datum, 1)
	for _, k := range j.Keys {
		out[0] = row.Text(k)
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}
