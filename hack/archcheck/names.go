package archcheck

import (
	"regexp"
	"strings"
)

// codeSpan is a Markdown code span: the map names packages in them.
// Fenced blocks (the layer drawing) are dropped first.
var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	fenced   = regexp.MustCompile("(?s)```.*?```")
)

// Unnamed returns the packages (paths relative to Module) that the map doc
// does not name. A package is named by a code span holding its path or a
// tail of it made of whole segments (`spine` for pkg/compute/spine,
// `internal/load` for hack/bench/internal/load); a span may group tails in
// braces (`operator/{render,rollout}`).
func Unnamed(doc string, pkgs []string) []string {
	names := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(fenced.ReplaceAllString(doc, ""), -1) {
		for _, n := range expandBraces(m[1]) {
			names[strings.TrimSuffix(strings.TrimSpace(n), "/...")] = true
		}
	}
	var out []string
	for _, p := range pkgs {
		if !namedBy(p, names) {
			out = append(out, p)
		}
	}
	return out
}

// namedBy reports whether some name is p or a tail of p's segments.
func namedBy(p string, names map[string]bool) bool {
	segs := strings.Split(p, "/")
	for i := range segs {
		if names[strings.Join(segs[i:], "/")] {
			return true
		}
	}
	return false
}

// expandBraces expands one brace group: "a/{b,c}" -> "a/b", "a/c".
func expandBraces(s string) []string {
	open := strings.IndexByte(s, '{')
	end := strings.IndexByte(s, '}')
	if open < 0 || end < open {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[open+1:end], ",") {
		out = append(out, s[:open]+strings.TrimSpace(alt)+s[end+1:])
	}
	return out
}
