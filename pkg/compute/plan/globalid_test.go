package plan

import (
	"encoding/json"
	"testing"
)

func TestGlobalID(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want GlobalID
		ok   bool
	}{
		{"u12", User(12), true},
		{"s0", System(0), true},
		{"t18446744073709551615", Transient(18446744073709551615), true},
		{"t18446744073709551616", GlobalID{}, false},
		{"u012", GlobalID{}, false},
		{"x1", GlobalID{}, false},
		{"u", GlobalID{}, false},
		{"u-1", GlobalID{}, false},
		{"u+1", GlobalID{}, false},
		{"", GlobalID{}, false},
	} {
		got, err := ParseGlobalID(tt.s)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseGlobalID(%q) = %v, %v", tt.s, got, err)
		}
		if tt.ok && got.String() != tt.s {
			t.Errorf("String() = %q, want %q", got.String(), tt.s)
		}
	}
	b, err := json.Marshal(map[GlobalID]GlobalID{User(1): System(2)})
	if err != nil || string(b) != `{"u1":"s2"}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
	var m map[GlobalID]GlobalID
	if err := json.Unmarshal(b, &m); err != nil || m[User(1)] != System(2) {
		t.Errorf("unmarshal = %v, %v", m, err)
	}
	if _, err := json.Marshal(GlobalID{}); err == nil {
		t.Error("marshalled the zero GlobalID")
	}
	if User(2).Compare(User(10)) >= 0 || System(5).Compare(User(1)) >= 0 || User(3).Compare(User(3)) != 0 {
		t.Error("Compare order wrong")
	}
}
