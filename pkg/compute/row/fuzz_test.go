package row

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzUnpack checks that decoding arbitrary bytes never panics, that every
// failure wraps ErrCorrupt, and that whatever decodes is canonical:
// re-encoding gives back the input, and the other accessors agree.
func FuzzUnpack(f *testing.F) {
	for _, d := range sampleDatums {
		f.Add([]byte(Pack(d, Text("x\x00y"), Null())))
	}
	// Non-canonical date/time payloads: a date beyond the range, a time
	// past 24:00, an interval remainder of a whole day.
	f.Add([]byte{tagDate, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{tagTime, 0x80, 0, 0, 0x20, 0, 0, 0, 0})
	f.Add(append([]byte{tagInterval, 0x80, 0, 0, 0, 0, 0, 0, 0}, append(
		binary.BigEndian.AppendUint64(nil, MicrosPerDay), 0x80, 0, 0, 0, 0x80, 0, 0, 0)...))
	// Records: a record field that is a record (never decodes), and an
	// unterminated record inside an array of records.
	f.Add([]byte{tagRecord, tagRecord, arrayEnd, arrayEnd})
	f.Add([]byte{tagRecordArray, tagRecord, tagInt64})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := Row(b)
		ds, err := r.Unpack()
		verr := r.Validate()
		if (err == nil) != (verr == nil) {
			t.Fatalf("Unpack err %v but Validate err %v", err, verr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if r.Arity() != len(ds) {
				t.Fatalf("Arity %d but %d datums before the corruption", r.Arity(), len(ds))
			}
			return
		}
		if re := Pack(ds...); !bytes.Equal(re, b) {
			t.Fatalf("non-canonical input accepted: %x re-encodes as %x", b, re)
		}
		alias, err := r.UnpackInto(nil)
		if err != nil || CompareDatums(alias, ds) != 0 {
			t.Fatalf("UnpackInto = %v, %v; Unpack = %v", alias, err, ds)
		}
		if r.Arity() != len(ds) {
			t.Fatalf("Arity %d, want %d", r.Arity(), len(ds))
		}
		for i, d := range ds {
			c, err := r.Column(i)
			if err != nil || c != d {
				t.Fatalf("Column(%d) = %v, %v; want %v", i, c, err, d)
			}
		}
		if len(ds) > 0 {
			p, err := Project(r, []int{len(ds) - 1, 0})
			if err != nil || !bytes.Equal(p, Pack(ds[len(ds)-1], ds[0])) {
				t.Fatalf("Project = %x, %v", p, err)
			}
		}
	})
}
