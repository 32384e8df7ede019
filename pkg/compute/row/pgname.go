package row

// PGName is PostgreSQL's name of the type, as a SQL client sees it in
// messages ("double precision", "timestamp with time zone", "text[]") and
// in the emulated catalog; "unknown" for NULL's type and invalid types.
func (t Type) PGName() string {
	if t.IsArray() {
		return t.ElemType().PGName() + "[]"
	}
	switch t {
	case TypeBool:
		return "boolean"
	case TypeInt64:
		return "bigint"
	case TypeFloat64:
		return "double precision"
	case TypeText:
		return "text"
	case TypeBytes:
		return "bytea"
	case TypeTimestamp:
		return "timestamp without time zone"
	case TypeTimestampTZ:
		return "timestamp with time zone"
	case TypeDate:
		return "date"
	case TypeTime:
		return "time without time zone"
	case TypeInterval:
		return "interval"
	case TypeNumeric:
		return "numeric"
	case TypeUUID:
		return "uuid"
	case TypeJSONB:
		return "jsonb"
	case TypeJSON:
		return "json"
	case TypeRecord:
		return "record"
	}
	return "unknown"
}
