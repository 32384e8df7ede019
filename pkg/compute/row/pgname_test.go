package row

import "testing"

func TestPGName(t *testing.T) {
	for _, tc := range []struct {
		t    Type
		want string
	}{
		{TypeBool, "boolean"},
		{TypeInt64, "bigint"},
		{TypeFloat64, "double precision"},
		{TypeTimestampTZ, "timestamp with time zone"},
		{TypeTime, "time without time zone"},
		{TypeNumeric, "numeric"},
		{TypeJSON, "json"},
		{TypeTextArray, "text[]"},
		{TypeTimestampTZArray, "timestamp with time zone[]"},
		{TypeNull, "unknown"},
		{TypeInvalid, "unknown"},
	} {
		if got := tc.t.PGName(); got != tc.want {
			t.Errorf("%v.PGName() = %q, want %q", tc.t, got, tc.want)
		}
	}
}
