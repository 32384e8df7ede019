package sql

import "testing"

// TestGrantOpApply: what GRANT [WITH GRANT OPTION], REVOKE and REVOKE
// GRANT OPTION FOR do to an entry's privileges and grant options (on an
// entry from the owner, so nothing cascades), and that an entry never
// keeps a grant option without its privilege.
func TestGrantOpApply(t *testing.T) {
	cases := []struct {
		op                  grantOp
		privs, opts         string
		wantPrivs, wantOpts string
	}{
		{grantOp{letters: "r", grant: true}, "", "", "r", ""},
		{grantOp{letters: "r", grant: true}, "ar", "r", "ar", "r"},
		{grantOp{letters: "rw", grant: true, option: true}, "a", "", "arw", "rw"},
		{grantOp{letters: "w", grant: true, option: true}, "rw", "r", "rw", "rw"},
		{grantOp{letters: "r"}, "ar", "ar", "a", "a"},
		{grantOp{letters: "rw"}, "rw", "rw", "", ""},
		{grantOp{letters: "r", option: true}, "ar", "ar", "ar", "a"},
		{grantOp{letters: "arw", option: true}, "r", "", "r", ""},
	}
	sn := &snapshot{roles: map[string]Role{"o": {Name: "o"}, "g": {Name: "g"}}}
	for _, c := range cases {
		e := newACLEdit("relation:u1", "o", nil)
		e.set("g", "o", c.privs, c.opts)
		if err := sn.applyOp(e, c.op, c.op.letters, "o", []string{"g"}); err != nil {
			t.Fatalf("%+v: %v", c.op, err)
		}
		privs, opts := e.held("g", "o")
		if privs != c.wantPrivs || opts != c.wantOpts {
			t.Errorf("%+v on %q/%q: %q/%q, want %q/%q", c.op, c.privs, c.opts, privs, opts, c.wantPrivs, c.wantOpts)
		}
		e.set("g", "o", privs, c.opts+"dD")
		if p, o := e.held("g", "o"); p != privs || intersectLetters(o, p) != o {
			t.Errorf("set keeps grant options %q without their privileges %q", o, p)
		}
	}
}
