package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TypeFromName maps a SQL type name to a row type. Types whose values the
// engine cannot represent exactly (numeric with its decimal scale, char(n)
// with its padding, time zones) are refused with 0A000 rather than
// approximated.
func TypeFromName(tn *pg.TypeName) (row.Type, error) {
	if tn == nil {
		return row.TypeInvalid, sqlerr.New(sqlerr.SyntaxError, "missing type name")
	}
	if len(tn.ArrayBounds) > 0 {
		return row.TypeInvalid, sqlerr.Unsupported("array types")
	}
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := strings.ToLower(parts[len(parts)-1])
	if len(parts) == 2 && parts[0] != "pg_catalog" {
		return row.TypeInvalid, sqlerr.Errorf(sqlerr.UndefinedObject, "type %q does not exist", strings.Join(parts, "."))
	}
	switch name {
	case "int2", "int4", "int8", "int", "integer", "bigint", "smallint":
		return row.TypeInt64, nil
	case "float4", "float8", "float", "real", "double precision":
		return row.TypeFloat64, nil
	case "text", "varchar", "character varying", "string":
		if name != "text" && len(tn.Typmods) > 0 {
			return row.TypeInvalid, sqlerr.Unsupported("varchar with a length limit")
		}
		return row.TypeText, nil
	case "bool", "boolean":
		return row.TypeBool, nil
	case "bytea":
		return row.TypeBytes, nil
	case "timestamp":
		return row.TypeTimestamp, nil
	case "numeric", "decimal":
		return row.TypeInvalid, sqlerr.Unsupported("type numeric (use float8 or bigint)")
	}
	return row.TypeInvalid, sqlerr.Unsupported("type " + name)
}

// PGTypeName is the Postgres name of a row type, for messages and for
// catalog emulation.
func PGTypeName(t row.Type) string {
	switch t {
	case row.TypeBool:
		return "boolean"
	case row.TypeInt64:
		return "bigint"
	case row.TypeFloat64:
		return "double precision"
	case row.TypeText:
		return "text"
	case row.TypeBytes:
		return "bytea"
	case row.TypeTimestamp:
		return "timestamp without time zone"
	}
	return "unknown"
}
