package pgwire

import (
	"encoding/binary"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// oidRecord is the anonymous record type (its array, record[], is 2287).
const oidRecord = 2249

// encodeRecordBinary appends record_send's form: the field count, then
// per field its type OID, its length (-1: NULL) and its binary form. A
// field's OID is its row type's (an integer field is int8: a record does
// not keep its fields' declared widths).
func encodeRecordBinary(dst []byte, d row.Datum) ([]byte, error) {
	fields := d.RecordFields()
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(fields)))
	for i, f := range fields {
		if f.IsNull() {
			// A NULL field carries no type; PostgreSQL sends the
			// column's, which an anonymous record does not keep.
			dst = binary.BigEndian.AppendUint32(dst, oidUnknown)
			dst = binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		col := sql.Column{Type: row.ColumnType{Type: f.Type()}}
		oid, _ := planner.PGType(f.Type(), 0, planner.TypeMod{})
		dst = binary.BigEndian.AppendUint32(dst, oid)
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = encodeBinary(dst, f, col); err != nil {
			return nil, fmt.Errorf("record field %d: %w", i+1, err)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}
