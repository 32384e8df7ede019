// Package row defines Tandem's values and their binary row encoding.
//
// A Datum is one SQL value (NULL, bool, int64, float64, text, bytes,
// timestamp) held in a small comparable struct; the zero Datum is NULL.
// Compare orders datums as SQL does for ORDER BY ... ASC: NULLs last,
// -0 = 0, NaN equal to itself and above +Infinity (as in Postgres). String
// prints Postgres' text output format. There is no numeric type: avg is
// computed in float64 by the engine.
//
// Type, ColumnType{Type, Nullable} and RelationDesc{Names, Types} describe
// relations; RelationDesc.Validate and Check catch malformed descriptions
// and rows.
//
// Row is the encoded form of a tuple, used as keys and values of every
// arrangement. Its invariants, which the rest of the engine relies on:
//
//   - bytes.Compare(Pack(x...), Pack(y...)) == CompareDatums(x, y);
//   - append(Pack(x...), Pack(y...)...) == Pack(append(x, y...)...);
//   - the encoding is canonical: Pack(Unpack(r)) == r whenever Unpack
//     succeeds, so equal tuples are equal bytes and Hash is sound;
//   - decoding never panics: arbitrary bytes give an error wrapping
//     ErrCorrupt.
//
// API: Pack, AppendDatum(s), Row.Unpack (copies), Row.UnpackInto
// (allocation-free, aliases the row), Row.Column, Row.Arity, Row.Validate,
// Row.Spans, Project/AppendProject (cut columns without decoding), and
// Hash (FNV-1a 64, the same in every process).
package row
