package pgwire

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// The array type OIDs (one-dimensional arrays of the scalar types).
const (
	oidBoolArray        = 1000
	oidInt2Array        = 1005
	oidInt4Array        = 1007
	oidTextArray        = 1009
	oidInt8Array        = 1016
	oidFloat8Array      = 1022
	oidVarcharArray     = 1015
	oidBpcharArray      = 1014
	oidTimestampTZArray = 1185
	oidNumericArray     = 1231
	oidDateArray        = 1182
	oidTimestampArray   = 1115
	oidUUIDArray        = 2951
	oidByteaArray       = 1001
	oidJSONBArray       = 3807
	oidJSONArray        = 199
)

// arrayOIDType maps an array type OID to its row type and its element
// OID; ok is false for other OIDs.
func arrayOIDType(oid uint32) (t row.Type, elemOID uint32, ok bool) {
	switch oid {
	case oidBoolArray:
		return row.TypeBoolArray, oidBool, true
	case oidInt2Array:
		return row.TypeInt64Array, oidInt2, true
	case oidInt4Array:
		return row.TypeInt64Array, oidInt4, true
	case oidInt8Array:
		return row.TypeInt64Array, oidInt8, true
	case oidTextArray:
		return row.TypeTextArray, oidText, true
	case oidVarcharArray:
		return row.TypeTextArray, oidVarchar, true
	case oidBpcharArray:
		return row.TypeTextArray, oidBpchar, true
	case oidTimestampTZArray:
		return row.TypeTimestampTZArray, oidTimestampTZ, true
	case oidFloat8Array:
		return row.TypeFloat64Array, oidFloat8, true
	case oidNumericArray:
		return row.TypeNumericArray, oidNumeric, true
	case oidDateArray:
		return row.TypeDateArray, oidDate, true
	case oidTimestampArray:
		return row.TypeTimestampArray, oidTimestamp, true
	case oidUUIDArray:
		return row.TypeUUIDArray, oidUUID, true
	case oidByteaArray:
		return row.TypeBytesArray, oidBytea, true
	case oidJSONBArray:
		return row.TypeJSONBArray, oidJSONB, true
	case oidJSONArray:
		return row.TypeJSONArray, oidJSON, true
	}
	return row.TypeInvalid, 0, false
}

// encodeArrayBinary appends array_send's form of a one-dimensional
// array: ndim (0 when empty), a has-NULL flag, the element OID, the
// length and lower bound (1), then each element as a length (-1: NULL)
// and its binary form.
func encodeArrayBinary(dst []byte, d row.Datum, col sql.Column) ([]byte, error) {
	elems := d.ArrayElems()
	// Elements of varchar(n)[] and char(n)[] have the column's modifier
	// (OID 1043 or 1042, char padded); other arrays' none.
	elemCol := sql.Column{Type: row.ColumnType{Type: d.Type().ElemType(), Nullable: true}, Width: col.Width}
	if d.Type() == row.TypeTextArray {
		elemCol.Mod = col.Mod
	}
	elemOID, _ := planner.PGType(elemCol.Type.Type, col.Width, elemCol.Mod)
	ndim, hasNull := uint32(0), uint32(0)
	if len(elems) > 0 {
		ndim = 1
	}
	for _, e := range elems {
		if e.IsNull() {
			hasNull = 1
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, ndim)
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, elemOID)
	if ndim == 1 {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)))
		dst = binary.BigEndian.AppendUint32(dst, 1)
	}
	for _, e := range elems {
		if e.IsNull() {
			dst = binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = encodeBinary(dst, e, elemCol); err != nil {
			return nil, fmt.Errorf("array element: %w", err)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// decodeArrayBinary reads array_recv's input for an array of type t
// sent with type OID oid.
func decodeArrayBinary(v []byte, t row.Type, oid uint32, loc *time.Location) (row.Datum, error) {
	bad := func(why string) (row.Datum, error) {
		return row.Null(), sqlerr.Errorf(sqlerr.InvalidBinaryRepresentation, "invalid binary array parameter of type OID %d: %s", oid, why)
	}
	u32 := func() (uint32, bool) {
		if len(v) < 4 {
			return 0, false
		}
		x := binary.BigEndian.Uint32(v)
		v = v[4:]
		return x, true
	}
	ndim, ok1 := u32()
	_, ok2 := u32() // has-NULL flag: NULLs are read from the lengths
	elemOID, ok3 := u32()
	if !ok1 || !ok2 || !ok3 {
		return bad("truncated header")
	}
	if ndim > 1 {
		return row.Null(), sqlerr.Unsupported("multidimensional arrays")
	}
	if et, _, ok := arrayOIDType(oid); !ok || et != t {
		return bad("not an array type")
	}
	if want, _ := oidType(elemOID); want != t.ElemType() {
		return bad(fmt.Sprintf("element type OID %d", elemOID))
	}
	n := uint32(0)
	if ndim == 1 {
		var lb uint32
		var ok bool
		if n, ok = u32(); !ok {
			return bad("truncated dimensions")
		}
		if lb, ok = u32(); !ok || lb != 1 {
			return bad("lower bound other than 1")
		}
		if n > uint32(len(v)/4) {
			return bad("more elements than bytes")
		}
	}
	elems := make([]row.Datum, n)
	for i := range elems {
		l, ok := u32()
		if !ok {
			return bad("truncated element")
		}
		if l == 0xFFFFFFFF {
			continue
		}
		if uint64(l) > uint64(len(v)) {
			return bad("truncated element")
		}
		e, err := decodeParam(v[:l], 1, t.ElemType(), elemOID, loc)
		if err != nil {
			return row.Null(), err
		}
		elems[i] = e
		v = v[l:]
	}
	if len(v) != 0 {
		return bad("trailing bytes")
	}
	d, err := row.Array(t, elems)
	if err != nil {
		return bad(err.Error())
	}
	return d, nil
}
