package sql

import (
	"context"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// ItemKind is the kind of a catalog item. The strings are those of
// pkg/catalog's Kind.
type ItemKind string

// Item kinds.
const (
	KindSource           ItemKind = "source"
	KindTable            ItemKind = "table"
	KindView             ItemKind = "view"
	KindMaterializedView ItemKind = "materialized-view"
	KindIndex            ItemKind = "index"
)

// Schemas. User objects live in public; the backend's introspection
// relations in introspection.
const (
	SchemaPublic        = "public"
	SchemaIntrospection = "introspection"
)

// Item is a catalog item as the SQL layer sees it.
type Item struct {
	// ID is the item's GlobalId: u<N> for user items, s<N> for system
	// (introspection) relations.
	ID     plan.GlobalID
	Schema string // SchemaPublic or SchemaIntrospection
	Name   string
	Kind   ItemKind
	// Desc is the relation's columns; for an index, those of the indexed
	// relation.
	Desc row.RelationDesc
	// SQL is the statement that created the item. The SQL layer re-plans a
	// view from it whenever the view is used.
	SQL string
	// Cluster maintains an index or materialized view.
	Cluster string
	// On is the indexed relation's id, for an index.
	On plan.GlobalID
	// Keys are an index's key expressions over the indexed relation's
	// columns.
	Keys []expr.Expr
	// Plan is what a materialized view or index maintains, over Gets of
	// the ids in DependsOn: a materialized view's query, or for an index
	// the indexed relation (a Get of On, or a view's inlined query). The
	// backend builds the maintained dataflow from it: source imports for
	// the Gets, a build of Plan, and an index export keyed by Keys (for
	// an index) or a storage sink (for a materialized view). Nil for
	// other kinds.
	Plan *plan.Plan
	// DependsOn lists the ids of the items this item was defined over,
	// views included (the SQL layer refuses to drop them while this item
	// exists). The collections a Plan reads are its Gets (Plan.DependsOn),
	// which never name views: views are inlined.
	DependsOn []plan.GlobalID
	// Owner is the role that owns the item (the creating session's user);
	// empty for items created before roles, which only superusers own.
	Owner string
}

// RowDiff is one change to a collection: an encoded row and a count.
type RowDiff struct {
	Row  row.Row
	Diff int64
}

// Replica describes one replica of a cluster.
type Replica struct {
	Name string
	// Size is the replica's size as given at creation ("1", "2x4": the
	// backend interprets it); Processes and Workers are what it resolved
	// to.
	Size      string
	Processes int
	Workers   int
	// Status is a short human-readable state ("ready", "hydrating",
	// "offline").
	Status string
}

// Cluster describes a cluster and its replicas.
type Cluster struct {
	Name     string
	Replicas []Replica
}

// ReplicaSpec asks for a replica. Size is passed through uninterpreted;
// Processes and Workers, when not zero, override what Size implies.
type ReplicaSpec struct {
	Name      string
	Size      string
	Processes int
	Workers   int
}

// SourceSpec asks for a load-generator source.
type SourceSpec struct {
	Name    string
	Cluster string
	// Generator is COUNTER, KEY VALUE or AUCTION.
	Generator string
	// Options are the generator's WITH options, names upper case
	// ("TICK INTERVAL", "MAX CARDINALITY", "KEYS").
	Options map[string]string
	SQL     string
	// Owner owns the source and its subsources.
	Owner string
}

// Catalog is the part of Backend that stores items: reads, creation of
// tables and views, drops.
type Catalog interface {
	// Items returns every item, user and system, in id order.
	Items(ctx context.Context) ([]Item, error)
	// Generation identifies the state of the catalog: the items, roles and
	// grants. It changes with every change to any of them and never goes
	// back, so what was read from the catalog at one generation may be
	// reused while Generation returns it (the per-statement snapshot is).
	Generation(ctx context.Context) (uint64, error)
	// CreateItem stores a new table, view, materialized view or index. The
	// backend assigns the id (item.ID is ignored) and returns the stored
	// item. A table gets an empty storage shard; a materialized view or an
	// index gets a maintained dataflow on item.Cluster built from
	// item.Plan. Name clashes are the SQL layer's to report; the backend
	// may still refuse with a 42710 error.
	CreateItem(ctx context.Context, item Item) (Item, error)
	// CreateSource creates a load-generator source and returns the items
	// it made: the source itself and, for generators with several outputs
	// (AUCTION), one item per subsource. The backend knows each
	// generator's columns.
	CreateSource(ctx context.Context, spec SourceSpec) ([]Item, error)
	// DropItems drops the given items, which the SQL layer has ordered
	// dependents first and checked to have no other dependents.
	DropItems(ctx context.Context, ids []plan.GlobalID) error
	// AlterTable replaces the name, Desc and SQL of the table item.ID
	// (ALTER TABLE); the SQL layer has checked that no dependent item is
	// broken by the change and rewrites the table's rows itself. A name
	// taken by another item is a 42P07 error.
	AlterTable(ctx context.Context, item Item) error
}

// Tables is the part of Backend that writes tables.
type Tables interface {
	// WriteTables appends updates to one or more tables at one new
	// timestamp, all or nothing (also across a crash); when it returns, a
	// strict serializable read sees the write.
	WriteTables(ctx context.Context, writes []TableWrite) error
}

// TableWrite is the updates one WriteTables makes to one table.
type TableWrite struct {
	Table   plan.GlobalID
	Updates []RowDiff
}

// SystemParameters is the part of Backend holding ALTER SYSTEM settings.
type SystemParameters interface {
	// SystemParameter returns the value of a system parameter, or an
	// error with code 42704 for an unknown name.
	SystemParameter(ctx context.Context, name string) (string, error)
	// SetSystemParameter changes a parameter; an empty value with reset
	// true restores its default. Invalid values are 22023 errors.
	SetSystemParameter(ctx context.Context, name, value string, reset bool) error
	// SystemParameterNames lists the known parameters (SHOW ALL).
	SystemParameterNames(ctx context.Context) []string
}

// Clusters is the part of Backend managing clusters and replicas.
type Clusters interface {
	Clusters(ctx context.Context) ([]Cluster, error)
	// CreateCluster creates a cluster with the given replicas (possibly
	// none).
	CreateCluster(ctx context.Context, name string, replicas []ReplicaSpec) error
	// DropCluster drops a cluster, which the SQL layer has checked holds
	// no items (or has dropped them first, for CASCADE).
	DropCluster(ctx context.Context, name string) error
	CreateReplica(ctx context.Context, cluster string, spec ReplicaSpec) error
	DropReplica(ctx context.Context, cluster, replica string) error
}

// Reads is the part of Backend that answers queries.
type Reads interface {
	// Peek returns the contents of a query result at one time chosen by
	// the backend for the request's isolation level. The caller must
	// Close the rows.
	Peek(ctx context.Context, req PeekRequest) (PeekRows, error)
	// Subscribe starts streaming the changes of a query's result.
	Subscribe(ctx context.Context, req SubscribeRequest) (Subscription, error)
}

// PeekRequest asks for the rows of a query at one time. Exactly one of
// Plan and Index is set.
type PeekRequest struct {
	// Cluster answers the read; Replica, when not empty, names the only
	// replica to ask (introspection reads).
	Cluster string
	Replica string
	// Plan is computed by a one-shot dataflow over Gets of catalog ids
	// (the backend imports the ids' indexes or sources).
	Plan *plan.Plan
	// Index is the fast path: read an existing index directly.
	Index *IndexPeek
	// Desc is the description of the result rows.
	Desc row.RelationDesc
	// Isolation is IsolationSerializable or IsolationStrictSerializable.
	Isolation string
	// Cut, when set, is an ORDER BY with a LIMIT the backend may push to
	// where the rows are read: only the first Limit rows in Order (counting
	// multiplicities) can make the result, so the others need not be sent.
	// It never offsets or projects; the SQL layer still applies the query's
	// whole finishing to what comes back, so a backend may ignore it.
	Cut *plan.Finishing
	// AsOf, when set, is the read time, held by a ReadSnapshot (a
	// transaction block's): the backend reads there and chooses none.
	AsOf *frontier.Time
}

// IndexPeek reads an index: the rows under Keys (every row when Keys is
// nil), each passed through MFP (over the indexed relation's columns).
type IndexPeek struct {
	Index plan.GlobalID
	// Keys are encoded key rows (row.Pack of the key datums) to look up.
	Keys []row.Row
	MFP  expr.MFP
}

// SubscribeRequest asks for the changes of a query's result.
type SubscribeRequest struct {
	Cluster string
	// Plan is maintained by a dataflow over Gets of catalog ids.
	Plan *plan.Plan
	Desc row.RelationDesc
	// Snapshot says whether the result at the start time is sent first.
	Snapshot bool
	// AsOf, when not nil, is the start time; otherwise the backend picks
	// the current time.
	AsOf *frontier.Time
}

// Subscription is a running SUBSCRIBE.
type Subscription interface {
	// Next blocks until the subscription's frontier advances, returning
	// the updates at times in [previous upper, upper) and the new upper,
	// or until ctx is done. A Next that returns because ctx is done must
	// lose nothing: a later Next resumes where the last successful one
	// ended (FETCH ... WITH (TIMEOUT) relies on this).
	Next(ctx context.Context) (SubscribeBatch, error)
	// Close stops the subscription and releases its dataflow.
	Close()
}

// SubscribeBatch is one step of a subscription.
type SubscribeBatch struct {
	Updates []TimedRowDiff
	// Upper is the frontier after this batch: every update at a time
	// before it has been delivered.
	Upper frontier.Time
}

// TimedRowDiff is a change at a time.
type TimedRowDiff struct {
	Row  row.Row
	Time frontier.Time
	Diff int64
}

// Backend is everything the SQL layer needs from the rest of the system
// (in production the controller; in tests a fake). It is consumed by
// Engine and must be safe for concurrent use.
type Backend interface {
	Catalog
	Tables
	Reads
	SystemParameters
	Clusters
	Roles
}
