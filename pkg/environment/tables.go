package environment

import (
	"context"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/storage"
)

// WriteTable implements sql.Tables. The write is durable and visible to
// strict serializable reads when it returns.
func (e *Environment) WriteTable(ctx context.Context, id plan.GlobalID, updates []sql.RowDiff) error {
	rows := make([]storage.RowDiff, len(updates))
	for i, u := range updates {
		rows[i] = storage.RowDiff{Row: u.Row, Diff: u.Diff}
	}
	if _, err := e.cfg.Storage.Append(ctx, id.String(), rows); err != nil {
		return sqlerr.Convert(fmt.Errorf("write table %s: %w", id, err))
	}
	return nil
}
