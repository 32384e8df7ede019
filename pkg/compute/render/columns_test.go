package render

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestRowDecoderDecodesUsedColumnsOnly(t *testing.T) {
	// The bytes payload holds 0x00, so decoding it would copy it.
	r := row.Pack(row.Int64(7), row.Text("a"), row.Bytes([]byte{0, 1, 0}), row.Null())
	tests := []struct {
		name  string
		exprs []expr.Expr
		cols  []int
	}{
		{"none", nil, nil},
		{"first", []expr.Expr{expr.Column(0)}, nil},
		{"nested and projected", []expr.Expr{expr.Add(expr.Literal(row.Int64(1)), expr.Column(1))}, []int{2}},
		{"beyond arity", []expr.Expr{expr.Column(9)}, []int{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := rowDecoder{used: usedColumns(tc.exprs, tc.cols)}
			got, err := d.decode(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 {
				t.Fatalf("arity %d, want 4", len(got))
			}
			full, _ := r.Unpack()
			for i := range got {
				if i < len(d.used) && d.used[i] && !row.Equal(got[i], full[i]) {
					t.Errorf("column %d = %v, want %v", i, got[i], full[i])
				}
				if (i >= len(d.used) || !d.used[i]) && !got[i].IsNull() {
					t.Errorf("unused column %d decoded as %v", i, got[i])
				}
			}
		})
	}
	d := rowDecoder{}
	if _, err := d.decode(row.Row{0xEE}, nil); err == nil {
		t.Error("a corrupt row decoded without error")
	}
	// The unused escaped column is not copied.
	d = rowDecoder{used: usedColumns([]expr.Expr{expr.Column(0)}, nil)}
	var buf []row.Datum
	if n := testing.AllocsPerRun(100, func() { buf, _ = d.decode(r, buf) }); n != 0 {
		t.Errorf("decode allocated %v times per row", n)
	}
}
