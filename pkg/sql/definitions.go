package sql

import (
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// maxDefinitions bounds the cache; past it the cache starts over.
const maxDefinitions = 4096

// definitions caches what statements derive from an item's defining SQL
// text: a view's parsed query, a table's integer widths and type
// modifiers, a view's column types (viewtypes.go). Every statement that reads a view or such a table used to
// parse its definition again (a third of a point read's planning). The
// text is the key, so a changed definition is a new entry; parsed trees
// are shared and only read.
type definitions struct {
	mu sync.Mutex
	m  map[string]*definition
	// views are the column types derived for views, by id (viewtypes.go).
	views map[plan.GlobalID]*viewTypes
}

// definition is one text's derived values, each computed once.
type definition struct {
	viewOnce sync.Once
	view     *pg.SelectStmt
	viewErr  error

	tableOnce sync.Once
	intWidths []planner.IntWidth
	typeMods  []planner.TypeMod
}

// of returns text's entry, creating it; d may be nil (no caching).
func (d *definitions) of(text string) *definition {
	if d == nil {
		return &definition{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil || len(d.m) >= maxDefinitions {
		d.m = map[string]*definition{}
	}
	def, ok := d.m[text]
	if !ok {
		def = &definition{}
		d.m[text] = def
	}
	return def
}

// viewQuery returns view it's defining query.
func (d *definitions) viewQuery(it *Item) (*pg.SelectStmt, error) {
	def := d.of(it.SQL)
	def.viewOnce.Do(func() { def.view, def.viewErr = parseViewQuery(it) })
	return def.view, def.viewErr
}

// tableTypes returns table it's integer widths and type modifiers.
func (d *definitions) tableTypes(it *Item) ([]planner.IntWidth, []planner.TypeMod) {
	def := d.of(it.SQL)
	def.tableOnce.Do(func() {
		def.intWidths = planner.TableIntWidths(it.SQL)
		def.typeMods = planner.TableTypeMods(it.SQL)
	})
	return def.intWidths, def.typeMods
}
