package sql

// PeekRows is a peek's result, read once, in the backend's order. A large
// result may be read from the backend's spill file as it is consumed, so a
// SELECT without ORDER BY can send it to the client without holding it in
// memory; Close releases it and must be called (also after an error).
type PeekRows interface {
	// Next returns the next row; ok=false at the end.
	Next() (d RowDiff, ok bool, err error)
	// Streamed reports whether the rows are read from outside memory as
	// they are consumed (worth streaming to the client), rather than held
	// already.
	Streamed() bool
	Close()
}

// RowsOf returns PeekRows over rows held in memory.
func RowsOf(rows []RowDiff) PeekRows { return &sliceRows{rows: rows} }

type sliceRows struct{ rows []RowDiff }

func (s *sliceRows) Next() (RowDiff, bool, error) {
	if len(s.rows) == 0 {
		return RowDiff{}, false, nil
	}
	d := s.rows[0]
	s.rows = s.rows[1:]
	return d, true, nil
}
func (*sliceRows) Streamed() bool { return false }
func (s *sliceRows) Close()       { s.rows = nil }

// CollectRows reads r to its end and closes it.
func CollectRows(r PeekRows) ([]RowDiff, error) {
	var unlimited memBudget
	return unlimited.collect(r)
}
