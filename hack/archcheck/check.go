package archcheck

import (
	"fmt"
	"slices"
	"strings"
)

// Violation is one import that breaks a rule.
type Violation struct {
	Package, Import, Rule string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.Package, v.Import, v.Rule)
}

// Check returns the imports of graph (package -> its imports, full import
// paths) that break rules, sorted.
func Check(graph map[string][]string, rules []Rule) []Violation {
	var out []Violation
	for pkg, imports := range graph {
		rel, ok := strings.CutPrefix(pkg, Module)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !under(rel, r.From) || slices.ContainsFunc(r.Except, func(e string) bool { return under(rel, e) }) {
				continue
			}
			for _, imp := range imports {
				if broken(imp, r) {
					out = append(out, Violation{Package: rel, Import: strings.TrimPrefix(imp, Module), Rule: r.Name})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// broken reports whether importing imp breaks r.
func broken(imp string, r Rule) bool {
	target := imp
	if rel, ok := strings.CutPrefix(imp, Module); ok {
		target = rel
	}
	if slices.ContainsFunc(r.Allowed, func(a string) bool { return under(target, a) }) {
		return false
	}
	return slices.ContainsFunc(r.Forbidden, func(f string) bool { return under(target, f) })
}

// under reports whether path p is prefix itself or below it, by whole path
// segments ("pkg/sql" covers "pkg/sql/parse" but not "pkg/sqlx"); a prefix
// ending in "/" covers everything that starts with it.
func under(p, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix) || p == strings.TrimSuffix(prefix, "/")
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}
