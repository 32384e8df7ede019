package parse

import (
	"reflect"
	"testing"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func TestParseTandemStatements(t *testing.T) {
	tests := []struct {
		sql   string
		check func(t *testing.T, st Statement)
	}{
		{"CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s', MAX CARDINALITY 10)", func(t *testing.T, st Statement) {
			s := st.(*CreateSource)
			want := []Option{{"TICK INTERVAL", ValueString, "1s"}, {"MAX CARDINALITY", ValueNumber, "10"}}
			if s.Name.Name != "c" || s.Generator != "COUNTER" || !reflect.DeepEqual(s.Options, want) {
				t.Fatalf("got %+v", s)
			}
		}},
		{"create source if not exists public.Kv in cluster q1 from load generator key value (keys = 100, \"SEED\" 3) for all tables", func(t *testing.T, st Statement) {
			s := st.(*CreateSource)
			if !s.IfNotExists || s.Name != (ObjectName{"public", "kv"}) || s.Cluster != "q1" || s.Generator != "KEY VALUE" || len(s.Options) != 2 || s.Options[1].Name != "SEED" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SUBSCRIBE TO v WITH (SNAPSHOT = false, PROGRESS)", func(t *testing.T, st Statement) {
			s := st.(*Subscribe)
			if s.Object == nil || s.Object.Name != "v" || len(s.Options) != 2 || s.Options[0].Value != "false" || s.Options[1].Kind != ValueNone {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SUBSCRIBE (SELECT a, count(*) FROM t GROUP BY a) AS OF 17", func(t *testing.T, st Statement) {
			s := st.(*Subscribe)
			if s.Query == nil || len(s.Query.TargetList) != 2 || s.AsOf != "17" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"COPY (SUBSCRIBE (SELECT a FROM t) WITH (PROGRESS)) TO STDOUT WITH (FORMAT text)", func(t *testing.T, st Statement) {
			s := st.(*Subscribe)
			if s.Query == nil || len(s.Options) != 1 {
				t.Fatalf("got %+v", s)
			}
		}},
		{"FETCH ALL c WITH (timeout = '1s')", func(t *testing.T, st Statement) {
			s := st.(*Fetch)
			if s.Timeout != "1s" || s.Fetch.Portalname != "c" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"DECLARE c CURSOR FOR SUBSCRIBE t", func(t *testing.T, st Statement) {
			s := st.(*DeclareSubscribe)
			if s.Cursor != "c" || s.Subscribe.Object.Name != "t" || s.Subscribe.SQL != "SUBSCRIBE t" {
				t.Fatalf("got %+v %+v", s, s.Subscribe)
			}
		}},
		{"DECLARE c CURSOR FOR SELECT 1", func(t *testing.T, st Statement) {
			if _, ok := st.(*Postgres); !ok {
				t.Fatalf("got %T", st)
			}
		}},
		{"CREATE CLUSTER c1 (SIZE = '2', REPLICATION FACTOR 1)", func(t *testing.T, st Statement) {
			s := st.(*CreateCluster)
			if s.Name != "c1" || len(s.Options) != 2 || s.Options[1].Name != "REPLICATION FACTOR" || s.Options[1].Value != "1" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE CLUSTER c3 REPLICAS (a (SIZE '1'), b (SIZE '2', WORKERS 4))", func(t *testing.T, st Statement) {
			s := st.(*CreateCluster)
			if !s.HasReplicas || len(s.Replicas) != 2 || s.Replicas[1].Name != "b" || len(s.Replicas[1].Options) != 2 {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE CLUSTER REPLICA c1.r2 (SIZE '1', WORKERS 2)", func(t *testing.T, st Statement) {
			s := st.(*CreateClusterReplica)
			if s.Cluster != "c1" || s.Replica != "r2" || len(s.Options) != 2 || s.Options[1].Value != "2" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"DROP CLUSTER REPLICA IF EXISTS c1.r2", func(t *testing.T, st Statement) {
			s := st.(*DropClusterReplica)
			if !s.IfExists || s.Cluster != "c1" || s.Replica != "r2" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"DROP SOURCE IF EXISTS a, b CASCADE", func(t *testing.T, st Statement) {
			if s := st.(*DropSource); !s.Cascade || !s.IfExists || len(s.Names) != 2 {
				t.Fatalf("got %+v", s)
			}
		}},
		{"DROP CLUSTER c1 CASCADE", func(t *testing.T, st Statement) {
			if s := st.(*DropCluster); !s.Cascade || s.Name != "c1" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE DEFAULT INDEX ON v", func(t *testing.T, st Statement) {
			if s := st.(*CreateIndex); !s.Default || s.On.Name != "v" || s.Name != "" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE INDEX i IN CLUSTER c ON s.v (a, b + 1)", func(t *testing.T, st Statement) {
			s := st.(*CreateIndex)
			if s.Name != "i" || s.Cluster != "c" || s.On != (ObjectName{"s", "v"}) || len(s.Exprs) != 2 || s.Exprs[1].GetAExpr() == nil {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE UNIQUE INDEX IF NOT EXISTS i ON t (e DESC, d ASC NULLS FIRST, (c + 1) DESC NULLS LAST)", func(t *testing.T, st Statement) {
			s := st.(*CreateIndex)
			if !s.Unique || s.Default || !s.IfNotExists || s.Name != "i" || len(s.Exprs) != 3 ||
				s.Exprs[0].GetColumnRef() == nil || s.Exprs[2].GetAExpr() == nil {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE INDEX ON v USING btree (a) IN CLUSTER c", func(t *testing.T, st Statement) {
			if s := st.(*CreateIndex); s.Cluster != "c" || len(s.Exprs) != 1 {
				t.Fatalf("got %+v", s)
			}
		}},
		{"CREATE MATERIALIZED VIEW mv IN CLUSTER c AS SELECT 1 AS x", func(t *testing.T, st Statement) {
			if s := st.(*CreateMaterializedView); s.Name.Name != "mv" || s.Cluster != "c" || s.Query == nil {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SHOW INDEXES ON v IN CLUSTER c", func(t *testing.T, st Statement) {
			if s := st.(*Show); s.Kind != ShowIndexes || s.Object.Name != "v" || s.Cluster != "c" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SHOW CLUSTER REPLICAS", func(t *testing.T, st Statement) {
			if s := st.(*Show); s.Kind != ShowClusterReplicas {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SHOW MATERIALIZED VIEWS", func(t *testing.T, st Statement) {
			if s := st.(*Show); s.Kind != ShowMaterializedViews {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SHOW COLUMNS FROM t", func(t *testing.T, st Statement) {
			if s := st.(*Show); s.Kind != ShowColumns || s.Object.Name != "t" {
				t.Fatalf("got %+v", s)
			}
		}},
		{"SHOW cluster", func(t *testing.T, st Statement) {
			if p := st.(*Postgres); p.Node.GetVariableShowStmt().GetName() != "cluster" {
				t.Fatalf("got %+v", p)
			}
		}},
		{"ALTER SYSTEM SET enable_compute_interactive_dataflows = true", func(t *testing.T, st Statement) {
			if p := st.(*Postgres); p.Node.GetAlterSystemStmt() == nil {
				t.Fatalf("got %+v", p)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			st, err := ParseOne(tc.sql)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tc.check(t, st)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		sql  string
		code string
	}{
		{"SELEC 1", sqlerr.SyntaxError},
		{"CREATE SOURCE s FROM LOAD GENERATOR NOPE", sqlerr.SyntaxError},
		{"CREATE SOURCE s FROM KAFKA CONNECTION k", sqlerr.FeatureNotSupported},
		{"CREATE CLUSTER REPLICA c (SIZE '1')", sqlerr.SyntaxError},
		{"SUBSCRIBE (SELECT", sqlerr.SyntaxError},
		{"SUBSCRIBE (INSERT INTO t VALUES (1))", sqlerr.SyntaxError},
		{"SHOW COLUMNS t", sqlerr.SyntaxError},
		{"CREATE DEFAULT INDEX ON v (a)", sqlerr.SyntaxError},
		{"CREATE UNIQUE DEFAULT INDEX ON v", sqlerr.SyntaxError},
		{"CREATE INDEX ON t (a USING <)", sqlerr.SyntaxError},
		{"CREATE INDEX ON t (a DESC DESC)", sqlerr.SyntaxError},
		{"CREATE INDEX ON t (a) LIMIT 1", sqlerr.SyntaxError},
		{"CREATE INDEX ON t ()", sqlerr.SyntaxError},
		{"CREATE SOURCE 'x", sqlerr.SyntaxError},
		{"SELECT 1; SELECT (", sqlerr.SyntaxError},
		// The grammar's window frame errors are PostgreSQL's 42P20.
		{"SELECT count(*) OVER (ROWS UNBOUNDED FOLLOWING) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS 1 FOLLOWING) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) FROM t", "42P20"},
		{"SELECT count(*) OVER (ROWS BETWEEN 1 FOLLOWING) FROM t", sqlerr.SyntaxError},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := Parse(tc.sql)
			if got := sqlerr.Code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
}

func TestParseMultiple(t *testing.T) {
	sts, err := Parse("CREATE TABLE t (a int); SUBSCRIBE t; ; SELECT 'a;b' -- c;\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 {
		t.Fatalf("got %d statements", len(sts))
	}
	if _, ok := sts[1].(*Subscribe); !ok {
		t.Fatalf("second is %T", sts[1])
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"SELECT 1", "CREATE SOURCE s FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')",
		"SUBSCRIBE (SELECT a FROM t) WITH (SNAPSHOT = false)", "CREATE INDEX ON v (a)", "SHOW INDEXES ON v",
		"DECLARE c CURSOR FOR SUBSCRIBE t", "CREATE CLUSTER REPLICA c.r (SIZE '1')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sts, err := Parse(s)
		if err != nil && sqlerr.Code(err) != sqlerr.SyntaxError && sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Fatalf("unexpected error code %s: %v", sqlerr.Code(err), err)
		}
		for _, st := range sts {
			if st == nil {
				t.Fatal("nil statement")
			}
		}
	})
}
