package expr

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// ArrayLikeOps are the operators of x op ANY/ALL (array) other than the
// comparisons: the pattern matches LIKE (~~), ILIKE (~~*), NOT LIKE
// (!~~) and NOT ILIKE (!~~*) and the regular expression matches ~, ~*,
// !~ and !~* over text, and jsonb containment @> and <@. Their
// array_cmp_any op argument is ArrayLikeOp plus their index here, after
// the comparisons of ArrayCmpOps.
var ArrayLikeOps = [...]string{"~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*", "@>", "<@"}

// ArrayRegexOp and ArrayContainsOp are the indexes in ArrayLikeOps of
// the first regular expression match and of jsonb containment.
const (
	ArrayRegexOp    = 4
	ArrayContainsOp = 8
)

// ArrayLikeOp is array_cmp_any's op argument for ArrayLikeOps[0].
const ArrayLikeOp = len(ArrayCmpOps)

// arrayOpCount bounds array_cmp_any's op argument.
const arrayOpCount = len(ArrayCmpOps) + len(ArrayLikeOps)

// arrayOpHolds reports whether x op e holds for non-NULL x and e, op
// being array_cmp_any's op argument.
func arrayOpHolds(op int64, x, e row.Datum) (bool, error) {
	if op < int64(ArrayLikeOp) {
		c, err := compareDatums(x, e)
		if err != nil {
			return false, err
		}
		return cmpHolds(op, c), nil
	}
	i := int(op) - ArrayLikeOp
	name := ArrayLikeOps[i]
	want := row.TypeText
	if i >= ArrayContainsOp {
		want = row.TypeJSONB
	}
	if x.Type() != want || e.Type() != want {
		return false, evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", x.Type(), name, e.Type())
	}
	switch {
	case i < ArrayRegexOp:
		ok, err := likeMatch(x.Text(), e.Text(), i%2 == 1)
		return ok != (i >= 2), err
	case i < ArrayContainsOp:
		pattern := e.Text()
		if strings.Contains(name, "*") {
			pattern = "(?i)" + pattern
		}
		d, err := evalRegexMatch(x, row.Text(pattern))
		if err != nil {
			return false, err
		}
		return d.Bool() != strings.HasPrefix(name, "!"), nil
	}
	if name == "<@" {
		x, e = e, x
	}
	d, err := evalJSONContains(x, e)
	return err == nil && d.Bool(), err
}
