package frontier

import "testing"

func TestFrontierOrder(t *testing.T) {
	tests := []struct {
		f, g      Frontier
		lessEqual bool
	}{
		{At(1), At(2), true},
		{At(2), At(1), false},
		{At(5), Closed(), true},
		{Closed(), At(5), false},
		{Closed(), Closed(), true},
		{Minimum(), At(0), true},
	}
	for _, tt := range tests {
		if got := tt.f.LessEqual(tt.g); got != tt.lessEqual {
			t.Errorf("%v <= %v = %v, want %v", tt.f, tt.g, got, tt.lessEqual)
		}
	}
	if Meet(At(3), Closed()) != At(3) || Join(At(3), Closed()) != Closed() {
		t.Fatal("meet/join with closed")
	}
	if !At(5).IsComplete(4) || At(5).IsComplete(5) || !Closed().IsComplete(MaxTime) {
		t.Fatal("IsComplete")
	}
	if At(10).AdvanceTime(3) != 10 || At(10).AdvanceTime(12) != 12 {
		t.Fatal("AdvanceTime")
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, f := range []Frontier{At(0), At(42), Closed(), At(MaxTime)} {
		g, err := Parse(f.String())
		if err != nil || g != f {
			t.Fatalf("round trip %v: got %v, %v", f, g, err)
		}
	}
	for _, bad := range []string{"", "5", "[x]", "[-1]"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestHolds(t *testing.T) {
	h := NewHolds()
	if !h.Frontier().IsClosed() {
		t.Fatal("empty holds should be closed")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Update(5, 1))
	must(h.Update(3, 2))
	if h.Frontier() != At(3) {
		t.Fatalf("got %v", h.Frontier())
	}
	must(h.Update(3, -2))
	if h.Frontier() != At(5) || h.Len() != 1 {
		t.Fatalf("got %v", h.Frontier())
	}
	if err := h.Update(5, -2); err == nil {
		t.Fatal("negative count accepted")
	}
}
