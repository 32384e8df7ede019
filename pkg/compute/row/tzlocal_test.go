package row

import (
	"testing"
	"time"
)

// TestTimestampFromLocalTransitions pins PostgreSQL's resolution of wall
// clock times at daylight-saving transitions: an ambiguous time (jump
// back) takes the offset after the transition, a skipped time (jump
// forward) the offset before it.
func TestTimestampFromLocalTransitions(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	lh, err := time.LoadLocation("Australia/Lord_Howe") // 30-minute shifts
	if err != nil {
		t.Skip(err)
	}
	local := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	utc := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05Z07:00", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	for _, tc := range []struct {
		loc         *time.Location
		local, want string
	}{
		{ny, "2024-11-03 01:30:00", "2024-11-03 06:30:00Z"}, // ambiguous: EST
		{ny, "2024-11-03 00:59:59", "2024-11-03 04:59:59Z"}, // before: EDT
		{ny, "2024-11-03 02:00:00", "2024-11-03 07:00:00Z"}, // after: EST
		{ny, "2024-03-10 02:30:00", "2024-03-10 07:30:00Z"}, // skipped: EST (03:30 EDT)
		{ny, "2024-03-10 03:00:00", "2024-03-10 07:00:00Z"},
		{ny, "2024-07-01 12:00:00", "2024-07-01 16:00:00Z"},
		{lh, "2024-04-07 01:45:00", "2024-04-06 15:15:00Z"}, // ambiguous: +10:30
		{time.UTC, "2024-11-03 01:30:00", "2024-11-03 01:30:00Z"},
	} {
		if got, want := TimestampFromLocal(local(tc.local), tc.loc), utc(tc.want); got != want {
			t.Errorf("%s in %s: got %s, want %s", tc.local, tc.loc, time.UnixMicro(got).UTC(), time.UnixMicro(want).UTC())
		}
	}
}
