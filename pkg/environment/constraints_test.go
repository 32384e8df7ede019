package environment

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/testr"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
	"github.com/tandemdb/tandem/pkg/storage"

	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// TestConstraintsSurviveRestart declares keys, a check and a default,
// alters the table, restarts the controller and checks the constraints
// are still enforced against the recovered rows.
func TestConstraintsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openTableStack(t, dir)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	exec := func(se *sql.Session, q string) error {
		_, err := se.ExecuteSQL(ctx, q)
		return err
	}
	se := sql.NewEngine(s.env).NewSession("u")
	for _, q := range []string{
		"CREATE TABLE emp (id int PRIMARY KEY, name text NOT NULL, salary int CHECK (salary > 0))",
		"INSERT INTO emp VALUES (1, 'ann', 10), (2, 'bob', 20)",
		"ALTER TABLE emp ADD COLUMN dept text DEFAULT 'ops'",
		"ALTER TABLE emp ADD CONSTRAINT emp_name_key UNIQUE (name)",
		"ALTER TABLE emp RENAME TO staff",
	} {
		if err := exec(se, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := exec(se, "INSERT INTO staff (id, name, salary) VALUES (1, 'x', 1)"); sqlerr.Code(err) != sqlerr.UniqueViolation {
		t.Fatalf("duplicate before restart: %v", err)
	}
	s.close()

	s = openTableStack(t, dir)
	defer s.close()
	se = sql.NewEngine(s.env).NewSession("u")
	for q, code := range map[string]string{
		"INSERT INTO staff (id, name, salary) VALUES (2, 'new', 5)": sqlerr.UniqueViolation,
		"INSERT INTO staff (id, name, salary) VALUES (3, 'ann', 5)": sqlerr.UniqueViolation,
		"INSERT INTO staff (id, name, salary) VALUES (3, 'cy', -5)": sqlerr.CheckViolation,
		"INSERT INTO staff (id, salary) VALUES (3, 5)":              sqlerr.NotNullViolation,
	} {
		if err := exec(se, q); sqlerr.Code(err) != code {
			t.Errorf("%s after restart: %v, want %s", q, err, code)
		}
	}
	if err := exec(se, "INSERT INTO staff (id, name, salary) VALUES (3, 'cy', 5)"); err != nil {
		t.Fatal(err)
	}
	res, err := se.ExecuteSQL(ctx, "SELECT count(*), min(dept), max(dept) FROM staff")
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0].Rows[0]; got[0].Int64() != 3 || got[1].Text() != "ops" || got[2].Text() != "ops" {
		t.Fatalf("rows after restart: %v", got)
	}
}

// openTableStack is openStack with the storage service the replicas read
// tables from (one-shot reads of a table import it from storage), as
// cmd/controller runs it.
func openTableStack(t *testing.T, dir string) *stack {
	t.Helper()
	s := &stack{}
	var err error
	if s.cat, err = catalog.Open(dir); err != nil {
		t.Fatal(err)
	}
	if s.store, err = storage.Open(filepath.Join(dir, "storage"), storage.Options{}); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	storage.NewService(s.store).Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	if s.orch, err = process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t), LogDir: filepath.Join(dir, "logs"),
		Env: []string{"TANDEM_STORAGE_ADDR=" + lis.Addr().String()}}); err != nil {
		t.Fatal(err)
	}
	s.ctl = controller.New(controller.Config{Log: testr.New(t), Orchestrator: s.orch, Storage: s.store, Oracle: s.store.Oracle()})
	s.ctl.Start()
	if s.env, err = Open(context.Background(), Config{Log: testr.New(t), Catalog: s.cat, Storage: s.store, Compute: s.ctl,
		ParamDefaults: testparams.Parameters(t)}); err != nil {
		t.Fatal(err)
	}
	return s
}
