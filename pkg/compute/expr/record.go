package expr

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Records (row/record.go): ROW(...) builds one, record_field reads a
// field back, and = < ... compare two as PostgreSQL's record_eq and
// record_cmp do (field by field with each field's own comparison, a NULL
// field equal to a NULL field and after every value), so that
// ROW(a, b) = ANY(path) is the membership test of a CYCLE clause.

// typeRecord is ROW(f1, ...): never NULL; a field may not be a record.
func typeRecord(args []row.ColumnType) (row.ColumnType, error) {
	for _, a := range args {
		if a.Type == row.TypeRecord || a.Type == row.TypeRecordArray {
			return row.ColumnType{}, evalErr(CodeFeatureNotSupported, "records nested in records are not supported")
		}
	}
	return row.ColumnType{Type: row.TypeRecord}, nil
}

func evalRecord(args []row.Datum) (row.Datum, error) {
	d, err := row.Record(args)
	if err != nil {
		return row.Null(), evalErr(CodeFeatureNotSupported, "%v", err)
	}
	return d, nil
}

// typeRecordField is record_field(r, i, target): target's type, NULL
// when r is or its field is.
func typeRecordField(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeRecord) || !is(args[1], row.TypeInt64) {
		return row.ColumnType{}, typeSig("record_field", args)
	}
	return row.ColumnType{Type: args[2].Type, Nullable: true}, nil
}

func evalRecordField(args []row.Datum) (row.Datum, error) {
	if args[0].IsNull() || args[1].IsNull() {
		return row.Null(), nil
	}
	fields := args[0].RecordFields()
	i := args[1].Int64()
	if i < 1 || i > int64(len(fields)) {
		return row.Null(), evalErr(CodeInternal, "record_field: record has no field %d", i)
	}
	f := fields[i-1]
	if t := args[2].Type(); !f.IsNull() && t != row.TypeNull && f.Type() != t {
		return row.Null(), evalErr(CodeInternal, "record_field: field %d has type %s, want %s", i, f.Type(), t)
	}
	return f, nil
}

// compareRecords is record_cmp: fields in turn by their types'
// comparisons (1.5 = 1.50, '1 mon' = '30 days'), NULL fields equal to
// each other and after every value, a shorter record first.
func compareRecords(a, b row.Datum) (int, error) {
	fa, fb := a.RecordFields(), b.RecordFields()
	for i := range min(len(fa), len(fb)) {
		an, bn := fa[i].IsNull(), fb[i].IsNull()
		switch {
		case an && bn:
			continue
		case an:
			return 1, nil
		case bn:
			return -1, nil
		}
		c, err := compareDatums(fa[i], fb[i])
		if err != nil {
			return 0, err
		}
		if c != 0 {
			return c, nil
		}
	}
	if len(fa) != len(fb) {
		return 0, evalErr(CodeDatatypeMismatch, "cannot compare record types with different numbers of columns")
	}
	return 0, nil
}
