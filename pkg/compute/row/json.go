package row

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// datumJSON is the wire form of a datum: JSON null for NULL, otherwise an
// object with exactly one field naming the type. Floats travel as strings
// so NaN and the infinities survive; text that is not valid UTF-8 (which
// encoding/json would silently replace) travels as base64.
type datumJSON struct {
	Bool       *bool   `json:"bool,omitempty"`
	Int64      *int64  `json:"int64,omitempty"`
	Float64    *string `json:"float64,omitempty"`
	Text       *string `json:"text,omitempty"`
	TextBase64 *string `json:"text_base64,omitempty"`
	Bytes      *string `json:"bytes,omitempty"` // base64
	Timestamp  *int64  `json:"timestamp,omitempty"`
	// Date/time types travel as numbers; an interval as [months, days,
	// micros].
	Date        *int32    `json:"date,omitempty"`
	Time        *int64    `json:"time,omitempty"`
	TimestampTZ *int64    `json:"timestamptz,omitempty"`
	Interval    *[3]int64 `json:"interval,omitempty"`
	Numeric     *string   `json:"numeric,omitempty"`
	UUID        *string   `json:"uuid,omitempty"`
	JSONB       *string   `json:"jsonb,omitempty"`
	// JSON is a json datum's row encoding, base64 (its text need not be
	// valid UTF-8 here).
	JSON *string `json:"json,omitempty"`
	// Array is an array datum's row encoding, base64.
	Array *string `json:"array,omitempty"`
}

// MarshalJSON encodes d; see datumJSON.
func (d Datum) MarshalJSON() ([]byte, error) {
	var j datumJSON
	switch d.Type() {
	case TypeNull:
		return []byte("null"), nil
	case TypeBool:
		b := d.Bool()
		j.Bool = &b
	case TypeInt64:
		i := d.Int64()
		j.Int64 = &i
	case TypeFloat64:
		s := strconv.FormatFloat(d.Float64(), 'g', -1, 64)
		j.Float64 = &s
	case TypeText:
		s := d.str
		if utf8.ValidString(s) {
			j.Text = &s
		} else {
			e := base64.StdEncoding.EncodeToString([]byte(s))
			j.TextBase64 = &e
		}
	case TypeBytes:
		e := base64.StdEncoding.EncodeToString([]byte(d.str))
		j.Bytes = &e
	case TypeTimestamp:
		t := d.Timestamp()
		j.Timestamp = &t
	case TypeDate:
		v := d.Date()
		j.Date = &v
	case TypeTime:
		v := d.Time()
		j.Time = &v
	case TypeTimestampTZ:
		v := d.TimestampTZ()
		j.TimestampTZ = &v
	case TypeInterval:
		iv := d.Interval()
		j.Interval = &[3]int64{int64(iv.Months), int64(iv.Days), iv.Micros}
	case TypeJSONB:
		s := d.String()
		j.JSONB = &s
	case TypeJSON:
		e := base64.StdEncoding.EncodeToString(Pack(d))
		j.JSON = &e
	case TypeInt64Array, TypeFloat64Array, TypeNumericArray, TypeTextArray, TypeBoolArray,
		TypeDateArray, TypeTimestampArray, TypeUUIDArray, TypeBytesArray, TypeJSONBArray, TypeTimestampTZArray, TypeJSONArray, TypeRecordArray, TypeRecord:
		e := base64.StdEncoding.EncodeToString(Pack(d))
		j.Array = &e
	case TypeNumeric, TypeUUID:
		s := d.String()
		if d.Type() == TypeNumeric {
			j.Numeric = &s
		} else {
			j.UUID = &s
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the form written by MarshalJSON.
func (d *Datum) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*d = Null()
		return nil
	}
	var j datumJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("unmarshal datum: %w", err)
	}
	n := 0
	for _, set := range []bool{j.Bool != nil, j.Int64 != nil, j.Float64 != nil, j.Text != nil,
		j.TextBase64 != nil, j.Bytes != nil, j.Timestamp != nil, j.Date != nil, j.Time != nil,
		j.TimestampTZ != nil, j.Interval != nil, j.Numeric != nil, j.UUID != nil, j.JSONB != nil, j.Array != nil, j.JSON != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("unmarshal datum %s: want exactly one type field, got %d", b, n)
	}
	switch {
	case j.Bool != nil:
		*d = Bool(*j.Bool)
	case j.Int64 != nil:
		*d = Int64(*j.Int64)
	case j.Float64 != nil:
		f, err := strconv.ParseFloat(*j.Float64, 64)
		if err != nil && !math.IsInf(f, 0) {
			return fmt.Errorf("unmarshal float64 datum: %w", err)
		}
		*d = Float64(f)
	case j.Text != nil:
		*d = Text(*j.Text)
	case j.TextBase64 != nil:
		raw, err := base64.StdEncoding.DecodeString(*j.TextBase64)
		if err != nil {
			return fmt.Errorf("unmarshal text datum: %w", err)
		}
		*d = Text(string(raw))
	case j.Bytes != nil:
		raw, err := base64.StdEncoding.DecodeString(*j.Bytes)
		if err != nil {
			return fmt.Errorf("unmarshal bytes datum: %w", err)
		}
		*d = Bytes(raw)
	case j.Timestamp != nil:
		*d = Timestamp(*j.Timestamp)
	case j.Date != nil:
		if !ValidDate(int64(*j.Date)) {
			return fmt.Errorf("unmarshal date datum: %d out of range", *j.Date)
		}
		*d = Date(*j.Date)
	case j.Time != nil:
		if *j.Time < 0 || *j.Time > MicrosPerDay {
			return fmt.Errorf("unmarshal time datum: %d out of range", *j.Time)
		}
		*d = Time(*j.Time)
	case j.TimestampTZ != nil:
		*d = TimestampTZ(*j.TimestampTZ)
	case j.Interval != nil:
		iv := *j.Interval
		if iv[0] != int64(int32(iv[0])) || iv[1] != int64(int32(iv[1])) {
			return fmt.Errorf("unmarshal interval datum: months or days out of range")
		}
		*d = IntervalDatum(Interval{Months: int32(iv[0]), Days: int32(iv[1]), Micros: iv[2]})
	case j.Numeric != nil:
		x, _, err := apd.NewFromString(*j.Numeric)
		if err != nil {
			return fmt.Errorf("unmarshal numeric datum: %w", err)
		}
		if *d, err = NumericExact(x); err != nil {
			return fmt.Errorf("unmarshal numeric datum: %w", err)
		}
	case j.UUID != nil:
		u, err := ParseUUID(*j.UUID)
		if err != nil {
			return fmt.Errorf("unmarshal uuid datum: %w", err)
		}
		*d = UUID(u)
	case j.JSONB != nil:
		v, err := parseJSON(*j.JSONB, true)
		if err != nil {
			return fmt.Errorf("unmarshal jsonb datum: %w", err)
		}
		*d = JSONB(v)
	case j.JSON != nil:
		raw, err := base64.StdEncoding.DecodeString(*j.JSON)
		if err != nil {
			return fmt.Errorf("unmarshal json datum: %w", err)
		}
		ds, err := Row(raw).Unpack()
		if err != nil || len(ds) != 1 || ds[0].Type() != TypeJSON {
			return fmt.Errorf("unmarshal json datum: not one json (%v)", err)
		}
		*d = ds[0]
	case j.Array != nil:
		raw, err := base64.StdEncoding.DecodeString(*j.Array)
		if err != nil {
			return fmt.Errorf("unmarshal array datum: %w", err)
		}
		ds, err := Row(raw).Unpack()
		if err != nil || len(ds) != 1 || !(ds[0].Type().IsArray() || ds[0].Type() == TypeRecord) {
			return fmt.Errorf("unmarshal array datum: not one array (%v)", err)
		}
		*d = ds[0]
	}
	return nil
}
