package expr

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// countCompiled counts the nodes of e carrying a precompiled pattern.
func countCompiled(e *Expr) int {
	n := 0
	if e.compiled != nil {
		n++
	}
	for i := range e.Args {
		n += countCompiled(&e.Args[i])
	}
	return n
}

func compiledIn(m *MFP) int {
	n := 0
	for i := range m.Expressions {
		n += countCompiled(&m.Expressions[i])
	}
	for i := range m.Predicates {
		n += countCompiled(&m.Predicates[i])
	}
	return n
}

// TestPrepareCompilesConstantPatternsOnce: Prepare compiles each call's
// constant pattern (and flags) once, leaves column patterns to each row
// and the MFP it was given untouched, and a prepared evaluation answers
// as an unprepared one, errors included.
func TestPrepareCompilesConstantPatternsOnce(t *testing.T) {
	m := Identity(2).
		Map(Call(FuncRegexpMatch, Column(0), txt("(a+)(x)?")),
			Call(FuncRegexpReplace, Column(0), Column(1), txt("-"), txt("g")),
			Call(FuncRegexpReplace, Column(0), txt("A"), txt("-"), Call(FuncConcatOp, txt("g"), txt("i"))),
			Call(FuncRegexpLike, Column(0), txt("(")),
			Call(FuncRegexpMatch, Column(0), txt("b"), txt("g"))).
		Filter(Call(FuncRegexMatch, Column(0), txt("^[a-z]")))
	p, err := m.Prepare(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := compiledIn(p.MFP()); got != 5 {
		t.Errorf("prepared MFP has %d compiled patterns, want 5 (every call but the column pattern)", got)
	}
	if got := compiledIn(&m); got != 0 {
		t.Errorf("Prepare changed the MFP it was given: %d compiled patterns", got)
	}
	for _, in := range [][]row.Datum{
		{row.Text("aab"), row.Text("a")}, {row.Text("xyz"), row.Text("y")}, {row.Text("B"), row.Text("(")},
		{row.Null(), row.Text("a")}, {row.Text("aa"), row.Null()},
	} {
		want, wok, werr := m.Evaluate(in, nil)
		got, gok, gerr := p.Evaluate(in, nil)
		if Code(werr) != Code(gerr) || wok != gok || len(got) != len(want) {
			t.Fatalf("%v: prepared (%v, %v, %v), unprepared (%v, %v, %v)", in, got, gok, gerr, want, wok, werr)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v column %d: prepared %v, unprepared %v", in, i, got[i], want[i])
			}
		}
	}
}

// TestPreparedRegexDoesNotCompilePerRow counts the cost of a row: a
// compilation allocates dozens of times, a prepared match not at all
// beyond its arguments.
func TestPreparedRegexDoesNotCompilePerRow(t *testing.T) {
	m := Identity(1).Filter(Call(FuncRegexpLike, Column(0), txt("^(ab|cd)+[0-9]*$"), txt("i")))
	p, err := m.Prepare(1)
	if err != nil {
		t.Fatal(err)
	}
	in := []row.Datum{row.Text("abCD12")}
	s := &Scratch{}
	prepared := testing.AllocsPerRun(50, func() {
		if _, ok, err := p.Evaluate(in, s); err != nil || !ok {
			t.Fatalf("evaluate: %v, %v", ok, err)
		}
	})
	unprepared := testing.AllocsPerRun(50, func() { _, _, _ = m.Evaluate(in, s) })
	if prepared > 2 || unprepared < prepared+10 {
		t.Fatalf("allocations per row: prepared %v, unprepared %v; want the prepared pattern compiled once", prepared, unprepared)
	}
}
