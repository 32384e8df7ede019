// Package row defines Tandem's values and their binary row encoding.
//
// A Datum is one SQL value (NULL, bool, int64, float64, text, bytes,
// timestamp, date, time, timestamptz, interval, numeric, uuid, jsonb, json,
// records and one-dimensional arrays of int64, float64, numeric, text,
// bool, records, ...) held in a
// small comparable struct; the zero Datum is NULL. Compare orders datums
// as SQL does for ORDER BY ... ASC: NULLs last, -0 = 0, NaN equal to
// itself and above +Infinity (as in Postgres, for float64 and numeric
// alike). String prints Postgres' text output format (timestamptz in UTC;
// AppendTextIn takes a zone).
//
// Date/time values (datetime.go, interval.go): a date is days since
// 1970-01-01 (MinInt32/MaxInt32 are -infinity/infinity, as in Postgres),
// a time micros since midnight, timestamp and timestamptz micros since
// 1970 (MinInt64/MaxInt64 are the infinities), an interval months, days
// and micros kept apart. The parsers (dtparse.go, intervalparse.go)
// return *ParseError, whose Kind the SQL layer maps to Postgres'
// SQLSTATEs; FuzzParseDateTime checks they never panic and that output
// parses back to the same value.
//
// Intervals and the encoding invariants: Postgres compares intervals by
// length (a month is 30 days, a day 24 hours), so '1 mon' = '30 days',
// yet they are different values that print differently. The encoding
// must keep distinct values distinct (Pack(Unpack(r)) == r), so Compare
// orders intervals by length and then by months and days: '1 mon' and
// '30 days' are adjacent but not equal. SQL's = and < on intervals use
// Interval.CompareLength, and ORDER BY uses CompareOrder (length only,
// so later sort keys break the tie as in Postgres); GROUP BY, DISTINCT
// and join keys, which work on encoded rows, keep the two apart. The
// encoding (tag 0x44) is the length as whole days and a remainder, then
// months and days, so that bytewise order is Compare's order.
//
// A numeric (numeric.go; arithmetic is apd's, github.com/cockroachdb/apd)
// is held as its encoding key: a class byte (-Infinity, negative, zero,
// positive, Infinity, NaN, in that order), and for a non-zero finite
// value 0.d1d2...dn × 10^w the weight w as a sign-flipped big-endian
// int32, one byte d+1 per digit and a 0x00 terminator, every byte after
// the class complemented for a negative value. The digits have no
// leading or trailing zero, so the key is the value alone: 1.0, 1.00 and 1
// have one key. A numeric datum also carries PostgreSQL's display scale
// (dscale) as its excess over the key's own fractional digits, in
// Datum.bits; the encoding appends it after the key as the byte 0xF8 and
// the excess as 2 bytes big endian, only when it is not zero, so rows
// written before the scale existed decode as values at their minimal
// scale (docs/design/numeric-scale.md). 1.5 and 1.50 are therefore
// different datums and different bytes, sorting by value and then by
// scale; storage reads back the scale written. Where SQL equality
// applies (GROUP BY, DISTINCT, join keys, set operations, unique keys)
// the SQL layer compares Datum.NumericKey, the value at its minimal
// scale. A
// uuid is its 16 bytes.
//
// A json is its document's text as written (tag 0x58, encoded as text
// is); SQL gives it no equality or order, so its byte order only serves
// the row invariants.
//
// A jsonb (jsonb.go, jsonbtext.go) is held as its order-preserving key,
// whose byte order is PostgreSQL's jsonb order (the empty array, then
// scalars null < string < number < boolean, then arrays by length and
// elements, then objects by pair count and pairs in storage order);
// TestJSONBOrderExhaustive checks it against a transcription of
// PostgreSQL's compareJsonbContainers. Its numbers are numerics, so a
// jsonb does not keep their trailing zeros (1.50 prints as 1.5).
//
// An array (array.go) is held as its elements' row encodings and a 0x00
// terminator, so its byte order is PostgreSQL's array_cmp (elements,
// NULL elements last, then the shorter array first);
// TestArrayEncodingOrderIsPostgresArrayOrder checks it against a
// transcription of array_cmp. Elements are never arrays.
//
// A record (record.go: ROW(...), PostgreSQL's anonymous record, and
// record[] its array) is held the same way, its fields' encodings and a
// 0x00 terminator, so its byte order is record_cmp's (field by field,
// NULL fields last); TestRecordEncodingOrderIsPostgresRecordOrder checks
// records and arrays of them against transcriptions. A field is never a
// record, so decoding nests at most record[] → record → array → scalar
// (TestRecordDecodingRejectsNesting, FuzzUnpack's seeds).
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
// Row.Spans, Project/AppendProject (cut columns without decoding),
// Row.UnpackUsed and Row.ColumnSpan (read a row only up to the columns
// asked for, stepping over fixed-width columns unchecked: for rows this
// encoder wrote; prefix.go), CompareEncoded and EncodedIsNull (compare
// encoded datums of one type without decoding), and Hash (FNV-1a 64, the
// same in every process).
package row
