package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/catalog"

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

// AlterTable implements sql.Catalog: it replaces a table's name, columns
// and definition in the catalog, in one catalog transaction.
func (e *Environment) AlterTable(_ context.Context, item sql.Item) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	desc, err := json.Marshal(item.Desc)
	if err != nil {
		return fmt.Errorf("encode desc: %w", err)
	}
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		old, err := tx.Item(item.ID.N)
		if err != nil {
			return err
		}
		if old.Kind != catalog.Kind(sql.KindTable) {
			return sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a table", old.Name)
		}
		if old.Name != item.Name {
			if err := tx.RenameItem(old.ID, item.Name); err != nil {
				if errors.Is(err, catalog.ErrExists) {
					return sqlerr.Errorf(sqlerr.DuplicateTable, "relation %q already exists", item.Name)
				}
				return err
			}
			old.Name = item.Name
		}
		old.Desc, old.SQL = desc, item.SQL
		return tx.UpdateItem(old)
	})
	if err != nil {
		return sqlerr.Convert(fmt.Errorf("alter table %s: %w", item.Name, err))
	}
	return nil
}
