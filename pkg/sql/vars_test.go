package sql

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func TestVars(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // value after Set, or the error code
	}{
		{"transaction_isolation", "SERIALIZABLE", IsolationSerializable},
		{"transaction_isolation", "strict  serializable", IsolationStrictSerializable},
		{"transaction_isolation", "read committed", IsolationSerializable},
		{"transaction_isolation", "eventual", sqlerr.InvalidParameterValue},
		{"Cluster", "c2", "c2"},
		{"client_encoding", "utf8", "UTF8"},
		{"client_encoding", "LATIN1", sqlerr.InvalidParameterValue},
		{"server_version", "9.6", sqlerr.CantChangeRuntimeParam},
		{"no_such_thing", "1", sqlerr.UndefinedObject},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			v := newVars()
			_, err := v.Set(tc.name, tc.value)
			if err != nil {
				if sqlerr.Code(err) != tc.want {
					t.Fatalf("Set: %v, want %s", err, tc.want)
				}
				return
			}
			got, err := v.Get(tc.name)
			if err != nil || got != tc.want {
				t.Fatalf("Get = %q, %v; want %q", got, err, tc.want)
			}
			if _, err := v.Reset(tc.name); err != nil {
				t.Fatal(err)
			}
			if def, _ := newVars().Get(tc.name); def != mustGet(t, v, tc.name) {
				t.Fatalf("Reset did not restore %q", def)
			}
		})
	}
	if r := newVars().Reported(); r["DateStyle"] != "ISO, MDY" || r["server_version"] != ServerVersion || r["cluster"] != "" {
		t.Fatalf("Reported = %v", r)
	}
}

func mustGet(t *testing.T, v *Vars, name string) string {
	t.Helper()
	s, err := v.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
