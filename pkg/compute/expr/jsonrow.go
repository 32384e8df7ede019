package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// typeJSONRow types json_row(pretty, k1, v1, ...): a boolean, then pairs
// of a text field name and a value to_json converts; json, never NULL
// (a NULL pretty prints as false, as row_to_json's strict call never
// sees it: the SQL layer passes a constant).
func typeJSONRow(args []row.ColumnType) (row.ColumnType, error) {
	if len(args)%2 != 1 {
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "json_row: field names and values do not pair up")
	}
	if t := args[0].Type; t != row.TypeBool && t != row.TypeNull {
		return row.ColumnType{}, evalErr(CodeUndefinedFunction, "json_row: pretty is %s, want bool", t)
	}
	for i := 1; i < len(args); i += 2 {
		if args[i].Type != row.TypeText {
			return row.ColumnType{}, evalErr(CodeUndefinedFunction, "json_row: field name %d is %s, want text", i/2+1, args[i].Type)
		}
	}
	values := make([]row.ColumnType, 0, len(args)/2)
	for i := 2; i < len(args); i += 2 {
		values = append(values, args[i])
	}
	if _, err := typeToJSON(values); err != nil {
		return row.ColumnType{}, err
	}
	return row.ColumnType{Type: row.TypeJSON}, nil
}

// evalJSONRow writes row_to_json's text: {"name":value,...} with no
// spaces (",\n " between fields when pretty), values as to_json gives
// them (json inserted as written, NULL as null).
func evalJSONRow(args []row.Datum) (row.Datum, error) {
	sep := ","
	if !args[0].IsNull() && args[0].Bool() {
		sep = ",\n "
	}
	b := []byte{'{'}
	for i := 1; i < len(args); i += 2 {
		if i > 1 {
			b = append(b, sep...)
		}
		if args[i].Type() != row.TypeText {
			return row.Null(), evalErr(CodeInvalidParameterValue, "json_row: field name %d is not a text", i/2+1)
		}
		b = append(row.AppendJSONString(b, args[i].Text()), ':')
		var err error
		if b, err = appendJSONValue(b, args[i+1]); err != nil {
			return row.Null(), err
		}
	}
	return row.JSONText(string(append(b, '}'))), nil
}
