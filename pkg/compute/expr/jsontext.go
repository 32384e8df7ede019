package expr

import (
	"encoding/json"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// The json type (row.TypeJSON) is its document's text as written. Input
// is validated (CastDatum: 22P02); its operators read the text without
// building a tree and return sub-documents exactly as written, so
// whitespace, key order and duplicate keys survive, as in PostgreSQL.
// Its conversion to jsonb reuses the jsonb parser.

// errJSONSyntax is PostgreSQL's error for a malformed json text.
func errJSONSyntax(s string) *EvalError {
	return evalErr(CodeInvalidTextRepr, "invalid input syntax for type json: %q", s)
}

// ParseJSONText validates s as a json document and returns the datum.
func ParseJSONText(s string) (row.Datum, error) {
	if !json.Valid([]byte(s)) {
		return row.Null(), errJSONSyntax(s)
	}
	return row.JSONText(s), nil
}

// jsonTextField is doc -> k over the text: an object's field by key (the
// last of duplicates, as PostgreSQL's json_object_field), an array's
// element by index (negative from the end). ok is false when missing.
func jsonTextField(doc string, k row.Datum, byIndex bool) (raw string, ok bool) {
	dec := json.NewDecoder(strings.NewReader(doc))
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	d, _ := tok.(json.Delim)
	switch {
	case d == '{' && !byIndex:
		for dec.More() {
			key, err := dec.Token()
			var v json.RawMessage
			if err != nil || dec.Decode(&v) != nil {
				return "", false
			}
			if key == k.Text() {
				raw, ok = string(v), true
			}
		}
		return raw, ok
	case d == '[' && byIndex:
		var elems []string
		for dec.More() {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return "", false
			}
			elems = append(elems, string(v))
		}
		i, n := k.Int64(), int64(len(elems))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return "", false
		}
		return elems[i], true
	}
	return "", false
}

// jsonTextStep is one step of -> or of a #> path: an int64 key indexes
// an array; a text key names an object's field, or indexes an array in a
// path (path elements are text).
func jsonTextStep(doc string, k row.Datum, path bool) (string, bool) {
	if k.Type() == row.TypeInt64 {
		return jsonTextField(doc, k, true)
	}
	if path && jsonTextKind(doc) == "array" {
		i, ok := pathIndex(k)
		if !ok {
			return "", false
		}
		return jsonTextField(doc, row.Int64(i), true)
	}
	return jsonTextField(doc, k, false)
}

// jsonTextKind is json_typeof of a valid document.
func jsonTextKind(doc string) string {
	s := strings.TrimLeft(doc, " \t\r\n")
	if s == "" {
		return ""
	}
	switch s[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonTextValue is ->>'s result from a sub-document: a string's text,
// NULL for null, the document's text otherwise.
func jsonTextValue(raw string) (row.Datum, error) {
	switch jsonTextKind(raw) {
	case "null":
		return row.Null(), nil
	case "string":
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return row.Null(), evalErr(CodeInvalidTextRepr, "json string %s: %v", raw, err)
		}
		return row.Text(s), nil
	}
	return row.Text(raw), nil
}

func evalJSONTextGet(a, k row.Datum) (row.Datum, error) {
	if raw, ok := jsonTextStep(a.JSONText(), k, false); ok {
		return row.JSONText(raw), nil
	}
	return row.Null(), nil
}

func evalJSONTextGetText(a, k row.Datum) (row.Datum, error) {
	if raw, ok := jsonTextStep(a.JSONText(), k, false); ok {
		return jsonTextValue(raw)
	}
	return row.Null(), nil
}

// jsonTextPath walks #>'s path; a NULL element gives NULL. An empty
// path gives the whole document without its surrounding whitespace.
func jsonTextPath(args []row.Datum) (string, bool) {
	doc := strings.Trim(args[0].JSONText(), " \t\r\n")
	for _, p := range args[1:] {
		var ok bool
		if p.IsNull() {
			return "", false
		}
		if doc, ok = jsonTextStep(doc, p, true); !ok {
			return "", false
		}
	}
	return doc, true
}

func evalJSONTextPath(args []row.Datum) (row.Datum, error) {
	if raw, ok := jsonTextPath(args); ok {
		return row.JSONText(raw), nil
	}
	return row.Null(), nil
}

func evalJSONTextPathText(args []row.Datum) (row.Datum, error) {
	if raw, ok := jsonTextPath(args); ok {
		return jsonTextValue(raw)
	}
	return row.Null(), nil
}

func evalJSONTextTypeof(a row.Datum) (row.Datum, error) {
	return row.Text(jsonTextKind(a.JSONText())), nil
}

// jsonTextToJSONB is json::jsonb: the jsonb parser over the text (the
// last of duplicate keys wins).
func jsonTextToJSONB(d row.Datum) (row.Datum, error) {
	return CastDatum(row.Text(d.JSONText()), row.TypeJSONB)
}
