package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/catalog"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/storage"
)

// WriteTables implements sql.Tables: one storage commit (AppendMany) at
// one timestamp, all or nothing across a crash. The write is durable and
// visible to strict serializable reads when it returns.
func (e *Environment) WriteTables(ctx context.Context, writes []sql.TableWrite) error {
	tws := make([]storage.TableWrite, len(writes))
	for i, w := range writes {
		rows := make([]storage.RowDiff, len(w.Updates))
		for j, u := range w.Updates {
			rows[j] = storage.RowDiff{Row: u.Row, Diff: u.Diff}
		}
		tws[i] = storage.TableWrite{Shard: w.Table.String(), Rows: rows}
	}
	if _, err := e.cfg.Storage.AppendMany(ctx, tws); err != nil {
		return sqlerr.Convert(fmt.Errorf("write tables: %w", err))
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
