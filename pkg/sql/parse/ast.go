package parse

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// Statement is one parsed statement.
type Statement interface {
	// Text is the statement's source text (without the trailing semicolon).
	Text() string
}

// Postgres is a statement parsed by the PostgreSQL grammar.
type Postgres struct {
	Node *pg.Node
	SQL  string
}

// ObjectName is a possibly schema-qualified object name. Unquoted parts are
// folded to lower case as in PostgreSQL.
type ObjectName struct {
	Schema string
	Name   string
}

// String prints the name, qualified when a schema is given.
func (n ObjectName) String() string {
	if n.Schema == "" {
		return n.Name
	}
	return n.Schema + "." + n.Name
}

// OptionValue kinds.
const (
	ValueNone   = iota // option given without a value, e.g. WITH (SNAPSHOT)
	ValueIdent         // an identifier or keyword
	ValueString        // a quoted string
	ValueNumber        // a numeric literal
)

// Option is one NAME [=] value item of a WITH (...) or (...) option list.
// Names are upper-cased and multi-word names are joined with one space
// ("REPLICATION FACTOR", "TICK INTERVAL").
type Option struct {
	Name  string
	Kind  int
	Value string
}

// CreateSource is CREATE SOURCE name [IN CLUSTER c] FROM LOAD GENERATOR gen
// [(options)] [FOR ALL TABLES].
type CreateSource struct {
	SQL         string
	Name        ObjectName
	IfNotExists bool
	Cluster     string
	// Generator is COUNTER, KEY VALUE or AUCTION (upper case, words joined
	// by one space).
	Generator string
	Options   []Option
}

// Subscribe is SUBSCRIBE [TO] obj | (query) [WITH (options)] [AS OF n].
// Exactly one of Object and Query is set.
type Subscribe struct {
	SQL     string
	Object  *ObjectName
	Query   *pg.SelectStmt
	Options []Option
	// AsOf is the literal of AS OF, or "" when absent.
	AsOf string
}

// DeclareSubscribe is DECLARE name CURSOR [WITHOUT HOLD] FOR SUBSCRIBE ...
type DeclareSubscribe struct {
	SQL       string
	Cursor    string
	Subscribe *Subscribe
}

// CreateCluster is CREATE CLUSTER name (options) or CREATE CLUSTER name
// REPLICAS (r (options), ...).
type CreateCluster struct {
	SQL     string
	Name    string
	Options []Option
	// HasReplicas says the REPLICAS form was used (possibly with none).
	HasReplicas bool
	Replicas    []ReplicaDef
}

// ReplicaDef is one replica of CREATE CLUSTER ... REPLICAS.
type ReplicaDef struct {
	Name    string
	Options []Option
}

// CreateClusterReplica is CREATE CLUSTER REPLICA cluster.replica (options).
type CreateClusterReplica struct {
	SQL     string
	Cluster string
	Replica string
	Options []Option
}

// DropCluster is DROP CLUSTER [IF EXISTS] name [CASCADE].
type DropCluster struct {
	SQL      string
	Name     string
	IfExists bool
	Cascade  bool
}

// DropClusterReplica is DROP CLUSTER REPLICA [IF EXISTS] cluster.replica.
type DropClusterReplica struct {
	SQL      string
	Cluster  string
	Replica  string
	IfExists bool
}

// ShowKind names what a SHOW lists.
type ShowKind string

// The SHOW forms Tandem understands beyond SHOW variable.
const (
	ShowSources           ShowKind = "SOURCES"
	ShowTables            ShowKind = "TABLES"
	ShowViews             ShowKind = "VIEWS"
	ShowMaterializedViews ShowKind = "MATERIALIZED VIEWS"
	ShowIndexes           ShowKind = "INDEXES"
	ShowClusters          ShowKind = "CLUSTERS"
	ShowClusterReplicas   ShowKind = "CLUSTER REPLICAS"
	ShowColumns           ShowKind = "COLUMNS"
	ShowObjects           ShowKind = "OBJECTS"
	// ShowCreate is SHOW CREATE TABLE | VIEW | MATERIALIZED VIEW | INDEX |
	// SOURCE obj: the statement that created obj.
	ShowCreate ShowKind = "CREATE"
)

// Show is SHOW SOURCES | TABLES | VIEWS | MATERIALIZED VIEWS | INDEXES [ON
// obj] [IN CLUSTER c] | CLUSTERS | CLUSTER REPLICAS | COLUMNS FROM obj |
// OBJECTS. SHOW of a variable is a Postgres statement.
type Show struct {
	SQL     string
	Kind    ShowKind
	Object  *ObjectName
	Cluster string
}

// CreateIndex is CREATE [UNIQUE | DEFAULT] INDEX [IF NOT EXISTS] [name]
// [IN CLUSTER c] ON obj [(exprs)] [IN CLUSTER c]. A default index has no
// expressions: it is keyed by all columns of obj. Each key may carry ASC
// or DESC and NULLS FIRST or LAST, which are accepted and have no effect
// (an index is an arrangement by the keys' encodings, read by lookup or
// in full, never in key order).
type CreateIndex struct {
	SQL         string
	Name        string
	Default     bool
	Unique      bool
	IfNotExists bool
	On          ObjectName
	Cluster     string
	Exprs       []*pg.Node
}

// CreateMaterializedView is CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT
// EXISTS] name [(columns)] [IN CLUSTER c] AS query.
type CreateMaterializedView struct {
	SQL         string
	Name        ObjectName
	IfNotExists bool
	Columns     []string
	Cluster     string
	Query       *pg.SelectStmt
}

// DropSource is DROP SOURCE [IF EXISTS] name[, ...] [CASCADE].
type DropSource struct {
	SQL      string
	Names    []ObjectName
	IfExists bool
	Cascade  bool
}

func (s *DropSource) Text() string { return s.SQL }

// Fetch is FETCH ... WITH (TIMEOUT = 'duration'): a FETCH from a
// SUBSCRIBE cursor that waits at most Timeout (a Postgres interval such
// as '1s' or '500ms', or a number of seconds) for rows.
type Fetch struct {
	SQL        string
	Fetch      *pg.FetchStmt
	Timeout    string
	HasTimeout bool
}

func (s *Fetch) Text() string                  { return s.SQL }
func (s *Postgres) Text() string               { return s.SQL }
func (s *CreateSource) Text() string           { return s.SQL }
func (s *Subscribe) Text() string              { return s.SQL }
func (s *DeclareSubscribe) Text() string       { return s.SQL }
func (s *CreateCluster) Text() string          { return s.SQL }
func (s *CreateClusterReplica) Text() string   { return s.SQL }
func (s *DropCluster) Text() string            { return s.SQL }
func (s *DropClusterReplica) Text() string     { return s.SQL }
func (s *Show) Text() string                   { return s.SQL }
func (s *CreateIndex) Text() string            { return s.SQL }
func (s *CreateMaterializedView) Text() string { return s.SQL }

// GrantCluster is GRANT privileges ON CLUSTER names TO roles, or REVOKE
// privileges ON CLUSTER names FROM roles (clusters are not PostgreSQL
// objects, so its grammar does not have them).
type GrantCluster struct {
	SQL    string
	Revoke bool
	// Privileges are upper case (USAGE, CREATE); empty means ALL.
	Privileges []string
	Clusters   []string
	// Grantees are role names; "" is PUBLIC.
	Grantees []string
}

// Text implements Statement.
func (s *GrantCluster) Text() string { return s.SQL }
