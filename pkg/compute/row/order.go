package row

// ColumnOrder is one ORDER BY term over a column of a decoded row.
// NULLs sort first unless NullsLast, whatever the direction: PostgreSQL's
// defaults (NULLS LAST ascending, NULLS FIRST descending) are set
// explicitly by whoever builds the order.
type ColumnOrder struct {
	Column    int  `json:"column"`
	Desc      bool `json:"desc,omitempty"`
	NullsLast bool `json:"nulls_last,omitempty"`
}

// Compare orders two values of the term's column: NULL placement first,
// then CompareOrder, reversed when Desc. Column is not read.
func (o ColumnOrder) Compare(x, y Datum) int {
	xn, yn := x.IsNull(), y.IsNull()
	switch {
	case xn && yn:
		return 0
	case xn || yn:
		// Exactly one NULL: it goes last iff NullsLast.
		if xn == o.NullsLast {
			return 1
		}
		return -1
	}
	c := CompareOrder(x, y)
	if o.Desc {
		c = -c
	}
	return c
}

// CompareColumns is the one ORDER BY comparator of decoded rows: the
// order's terms in turn, each by ColumnOrder.Compare. A column past the
// end of a row reads as NULL (a malformed plan must not panic). Rows
// equal on every term compare 0; callers that need a total order break
// ties themselves (by the encoded row, or CompareDatums).
func CompareColumns(a, b []Datum, order []ColumnOrder) int {
	for _, o := range order {
		if c := o.Compare(column(a, o.Column), column(b, o.Column)); c != 0 {
			return c
		}
	}
	return 0
}

// column is ds[i], or NULL when i is out of range.
func column(ds []Datum, i int) Datum {
	if i < 0 || i >= len(ds) {
		return Null()
	}
	return ds[i]
}
