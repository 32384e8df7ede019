package row

// RowCount is a row of a read's result with its multiplicity: the one
// type a peek's answer has from the worker that walks an index to the
// SQL layer (the compute protocol carries it as RowCount{row, count}). A
// result's counts are positive; zero and negative counts are the
// producer's bug, which finishing and the protocol's encoder refuse.
type RowCount struct {
	Row   Row
	Count int64
}
