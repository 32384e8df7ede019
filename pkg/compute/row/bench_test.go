package row

import (
	"testing"
)

var benchRow = Pack(Int64(123456789), Text("some-key-value"), Float64(3.25), Null(), Timestamp(1_700_000_000_000_000))

func BenchmarkPack(b *testing.B) {
	ds := []Datum{Int64(123456789), Text("some-key-value"), Float64(3.25), Null(), Timestamp(1_700_000_000_000_000)}
	buf := make(Row, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDatums(buf[:0], ds...)
	}
}

func BenchmarkUnpackInto(b *testing.B) {
	dst := make([]Datum, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = benchRow.UnpackInto(dst)
	}
}

func BenchmarkColumn(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = benchRow.Column(2)
	}
}

func BenchmarkProject(b *testing.B) {
	buf := make(Row, 0, 64)
	cols := []int{2, 0}
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendProject(buf[:0], benchRow, cols)
	}
}

func BenchmarkHash(b *testing.B) {
	b.SetBytes(int64(len(benchRow)))
	for b.Loop() {
		_ = Hash(benchRow)
	}
}
