package operators

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func ivDatum(t *testing.T, s string) row.Datum {
	t.Helper()
	iv, err := row.ParseInterval(s)
	if err != nil {
		t.Fatal(err)
	}
	return row.IntervalDatum(iv)
}

// TestIntervalSumAvg checks sum and avg of intervals: fields summed
// apart, avg divided as interval_div (months cascade to days, days to
// time), multiplicities, NULLs, DISTINCT, and range judged on the total
// only (partial sums may leave int32).
func TestIntervalSumAvg(t *testing.T) {
	maxMon := row.IntervalDatum(row.Interval{Months: math.MaxInt32})
	minusMaxMon := row.IntervalDatum(row.Interval{Months: -math.MaxInt32})
	tests := []struct {
		name     string
		fn       AggFunc
		distinct bool
		args     []string // "" is NULL
		mult     []int64  // per argument; nil means all 1
		raw      []row.Datum
		want     string // "" for NULL, "22008" for the range error
	}{
		{"sum keeps fields apart", AggSum, false, []string{"1 mon 1 day 1 second", "0", "24 hours"}, nil, nil, "1 mon 1 day 24:00:01"},
		{"avg cascades", AggAvg, false, []string{"1 mon 1 day 1 second", "0", "0"}, nil, nil, "10 days 08:00:00.333333"},
		{"avg of a month by seven", AggAvg, false, []string{"1 mon", "0"}, []int64{1, 6}, nil, "4 days 06:51:25.6896"},
		{"multiplicity", AggSum, false, []string{"1 hour", "-1 day"}, []int64{3, 2}, nil, "-2 days +03:00:00"},
		{"distinct", AggAvg, true, []string{"1 hour", "1 hour", "3 hours"}, nil, nil, "02:00:00"},
		{"nulls ignored", AggAvg, false, []string{"", "2 days", ""}, nil, nil, "2 days"},
		{"only nulls", AggSum, false, []string{"", ""}, nil, nil, ""},
		{"total out of range", AggSum, false, []string{"178000000 years", "178000000 years"}, nil, nil, "22008"},
		{"partial sums out of range", AggSum, false, nil, nil, []row.Datum{maxMon, maxMon, minusMaxMon}, "178956970 years 7 mons"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args []argCount
			for i, s := range tc.args {
				d := row.Null()
				if s != "" {
					d = ivDatum(t, s)
				}
				n := int64(1)
				if tc.mult != nil {
					n = tc.mult[i]
				}
				args = append(args, argCount{d: d, n: n})
			}
			for _, d := range tc.raw {
				args = append(args, argCount{d: d, n: 1})
			}
			a := Aggregate{Func: tc.fn, Distinct: tc.distinct}
			if needsSorted(a, args) {
				slices.SortFunc(args, func(x, y argCount) int { return row.Compare(x.d, y.d) })
			}
			got, err := evalAggregate(a, args, int64(len(args)))
			switch {
			case tc.want == "22008":
				var e Error
				if !errors.As(err, &e) || e.Code != CodeDatetimeFieldOverflow {
					t.Fatalf("got %v, %v; want error 22008", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.want == "":
				if !got.IsNull() {
					t.Fatalf("got %v, want NULL", got)
				}
			case got.IsNull() || got.Type() != row.TypeInterval || got.Interval() != ivDatum(t, tc.want).Interval():
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
}

// TestWindowIntervalRunningSum checks that the running accumulator of a
// frame from the partition's start gives what the frame-by-frame
// evaluation gives, for sum and avg of intervals with NULLs.
func TestWindowIntervalRunningSum(t *testing.T) {
	vals := []string{"1 mon 1 day 1 second", "", "-3 days 04:00:00", "7 hours", "", "1 mon -29 days", "0.5 seconds"}
	var in []ValDiff
	for i, s := range vals {
		d := row.Null()
		if s != "" {
			d = ivDatum(t, s)
		}
		in = append(in, ValDiff{Val: row.Pack(row.Int64(int64(i)), d), Diff: 1})
	}
	in = sortedVals(in)
	order := []row.ColumnOrder{{Column: 0}}
	for _, fn := range []AggFunc{AggSum, AggAvg} {
		run := WindowFrame{Rows: true, Start: FrameBound{Kind: BoundUnboundedPreceding}, End: FrameBound{Kind: BoundCurrentRow}}
		// The same frame, written so that it is evaluated frame by frame.
		each := WindowFrame{Rows: true, Start: FrameBound{Kind: BoundPreceding, Offset: 100}, End: FrameBound{Kind: BoundCurrentRow}}
		agg := Aggregate{Func: fn, Column: 1}
		spec := WindowSpec{Order: order, Funcs: []WindowFunc{
			{Kind: WinAggregate, Agg: agg, Arg: -1, Default: -1, Frame: run},
			{Kind: WinAggregate, Agg: agg, Arg: -1, Default: -1, Frame: each},
		}}
		out, err := WindowLogic(spec)(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(vals) {
			t.Fatalf("%s: %d rows, want %d", fn, len(out), len(vals))
		}
		for _, o := range out {
			ds, err := row.Row(o.Val).Unpack()
			if err != nil {
				t.Fatal(err)
			}
			if !row.Equal(ds[2], ds[3]) {
				t.Errorf("%s at %v: running %v, frame by frame %v", fn, ds[0], ds[2], ds[3])
			}
			if ds[0].Int64() == 0 && ds[2].IsNull() {
				t.Errorf("%s: NULL at the first row", fn)
			}
		}
	}
}
