package plan

import (
	"math"
	"reflect"
)

// sameValue reports whether a and b, of one type, hold the same plan
// value, compared structurally field by field (unexported fields too: a
// row.Datum or a frontier.Frontier is its unexported fields). Two rules
// differ from reflect.DeepEqual, so that what the wire cannot tell apart
// compares equal: a nil slice or map equals an empty one, and floats
// compare by their bits (a NaN equals itself). Functions and channels,
// which plans do not hold, are equal only when both are nil. Plans are
// trees, so the walk needs no cycle check.
func sameValue(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Complex64, reflect.Complex128:
		ca, cb := a.Complex(), b.Complex()
		return math.Float64bits(real(ca)) == math.Float64bits(real(cb)) && math.Float64bits(imag(ca)) == math.Float64bits(imag(cb))
	case reflect.String:
		return a.String() == b.String()
	case reflect.Slice, reflect.Array:
		return sameElements(a, b)
	case reflect.Map:
		return sameMap(a, b)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default: // Func, Chan, UnsafePointer
		return a.IsNil() && b.IsNil()
	}
}

func sameElements(a, b reflect.Value) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !sameValue(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

func sameMap(a, b reflect.Value) bool {
	if a.Len() != b.Len() {
		return false
	}
	for it := a.MapRange(); it.Next(); {
		bv := b.MapIndex(it.Key())
		if !bv.IsValid() || !sameValue(it.Value(), bv) {
			return false
		}
	}
	return true
}
