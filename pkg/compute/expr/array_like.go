package expr

import "github.com/tandemdb/tandem/pkg/compute/row"

// ArrayLikeOps are the pattern operators of x op ANY/ALL (array): LIKE
// (~~), ILIKE (~~*), NOT LIKE (!~~) and NOT ILIKE (!~~*). Their
// array_cmp_any op argument is ArrayLikeOp plus their index here, after
// the comparisons of ArrayCmpOps.
var ArrayLikeOps = [...]string{"~~", "~~*", "!~~", "!~~*"}

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
	i := op - int64(ArrayLikeOp)
	fold, negate := i%2 == 1, i >= 2
	if x.Type() != row.TypeText || e.Type() != row.TypeText {
		return false, evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", x.Type(), ArrayLikeOps[i], e.Type())
	}
	ok, err := likeMatch(x.Text(), e.Text(), fold)
	return ok != negate, err
}
