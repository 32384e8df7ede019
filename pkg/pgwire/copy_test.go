package pgwire

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

func count(t *testing.T, c *pgx.Conn, q string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestCopyFromPgx loads rows with pgx's CopyFrom (binary COPY FROM STDIN)
// and checks that a bad row, or a duplicate key, writes nothing.
func TestCopyFromPgx(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, score float8, note text DEFAULT 'none')"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{int32(1), "a", 1.5}, {int32(2), "b", nil}, {int32(3), "c", 3.0}}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "score"}, pgx.CopyFromRows(rows))
	if err != nil || n != 3 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	var note string
	if err := c.QueryRow(ctx, "SELECT note FROM t WHERE id = 2").Scan(&note); err != nil || note != "none" {
		t.Fatalf("default after COPY: %q, %v", note, err)
	}
	// A NULL in a NOT NULL column: the whole COPY is refused.
	bad := [][]any{{int32(4), "d", 1.0}, {int32(5), nil, 1.0}}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "score"}, pgx.CopyFromRows(bad))
	if pgCode(err) != "23502" {
		t.Fatalf("COPY with a NULL name: %v, want 23502", err)
	}
	// A duplicate key: refused whole, with the key in the detail.
	dup := [][]any{{int32(6), "e", 1.0}, {int32(1), "again", 1.0}}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "score"}, pgx.CopyFromRows(dup))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" || pe.Detail != "Key (id)=(1) already exists." {
		t.Fatalf("COPY with a duplicate key: %v, want 23505", err)
	}
	if got := count(t, c, "SELECT count(*) FROM t"); got != 3 {
		t.Fatalf("rows after refused COPYs: %d, want 3", got)
	}
	// Out of range for an integer column: 22003, nothing written.
	big := [][]any{{int64(1) << 40, "f", 1.0}}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "score"}, pgx.CopyFromRows(big))
	if err == nil {
		t.Fatal("COPY of an out-of-range id succeeded")
	}
	if got := count(t, c, "SELECT count(*) FROM t"); got != 3 {
		t.Fatalf("rows after refused COPYs: %d, want 3", got)
	}
}

// TestCopyFromText sends text and CSV COPY data through pgconn and checks
// the error context of a bad line.
func TestCopyFromText(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (a int, b int, c text)"); err != nil {
		t.Fatal(err)
	}
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader("1\t2\tx\n3\t\\N\ty\\tz\n"), "COPY t FROM STDIN")
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("text COPY: %v %v", tag, err)
	}
	csv := "a,b,c\n4,5,\"multi\nline\"\n6,,\"\"\n"
	tag, err = c.PgConn().CopyFrom(ctx, strings.NewReader(csv), "COPY t FROM STDIN WITH (FORMAT csv, HEADER, FREEZE)")
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("CSV COPY: %v %v", tag, err)
	}
	var s string
	if err := c.QueryRow(ctx, "SELECT c FROM t WHERE a = 4").Scan(&s); err != nil || s != "multi\nline" {
		t.Fatalf("CSV quoted newline: %q %v", s, err)
	}
	var isNull bool
	if err := c.QueryRow(ctx, "SELECT b IS NULL AND c = '' FROM t WHERE a = 6").Scan(&isNull); err != nil || !isNull {
		t.Fatalf("CSV NULL and empty string: %v %v", isNull, err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("7\t8\tok\n9\tx\tbad\n"), "COPY t FROM STDIN")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22P02" || pe.Where != `COPY t, line 2, column b: "x"` {
		t.Fatalf("bad line: %#v", err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("7\t8\n"), "COPY t FROM STDIN")
	if !errors.As(err, &pe) || pe.Code != "22P04" {
		t.Fatalf("missing column: %v", err)
	}
	if got := count(t, c, "SELECT count(*) FROM t"); got != 4 {
		t.Fatalf("rows: %d, want 4", got)
	}
	// In a transaction, with TRUNCATE first, as pgbench -i does.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "TRUNCATE t"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, strings.NewReader("10\t10\tten\n"), "COPY t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, c, "SELECT count(*) FROM t"); got != 1 {
		t.Fatalf("rows after TRUNCATE and COPY in a transaction: %d, want 1", got)
	}
}

// TestConcurrentKeyInserts inserts the same keys from several connections
// at once: exactly one insert of each key succeeds.
func TestConcurrentKeyInserts(t *testing.T) {
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE k (id int PRIMARY KEY, who int)"); err != nil {
		t.Fatal(err)
	}
	const conns, keys = 4, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := map[int]int{}
	for w := 0; w < conns; w++ {
		cw := connect(t, addr, "")
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for key := 0; key < keys; key++ {
				// Half the writers use a transaction block, whose insert
				// is checked again at COMMIT.
				var err error
				if w%2 == 0 {
					_, err = cw.Exec(ctx, "INSERT INTO k VALUES ($1, $2)", key, w)
				} else {
					err = insertInTx(ctx, cw, key, w)
				}
				if err == nil {
					mu.Lock()
					wins[key]++
					mu.Unlock()
				} else if pgCode(err) != "23505" {
					t.Errorf("insert %d: %v", key, err)
				}
			}
		}(w)
	}
	wg.Wait()
	for key := 0; key < keys; key++ {
		if wins[key] != 1 {
			t.Errorf("key %d inserted %d times", key, wins[key])
		}
	}
	if got := count(t, c, "SELECT count(*) FROM k"); got != keys {
		t.Fatalf("rows: %d, want %d", got, keys)
	}
	// Two transaction blocks insert one key, both before either commits:
	// the second COMMIT finds the key taken and fails.
	a, b := connect(t, addr, ""), connect(t, addr, "")
	txa, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txb, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []pgx.Tx{txa, txb} {
		if _, err := tx.Exec(ctx, "INSERT INTO k VALUES (100, 0)"); err != nil {
			t.Fatal(err)
		}
	}
	if err := txa.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := txb.Commit(ctx); pgCode(err) != "23505" {
		t.Fatalf("second COMMIT of key 100: %v, want 23505", err)
	}
	if got := count(t, c, "SELECT count(*) FROM k WHERE id = 100"); got != 1 {
		t.Fatalf("rows with key 100: %d, want 1", got)
	}
}

func insertInTx(ctx context.Context, c *pgx.Conn, key, w int) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO k VALUES ($1, $2)", key, w); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

// TestPsqlCopy loads a file with psql's \copy.
func TestPsqlCopy(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
		if len(dirs) == 0 {
			t.Skip("psql not installed")
		}
		psql = dirs[0]
	}
	addr := startServer(t, Config{})
	c := connect(t, addr, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE p (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("id,v\n1,one\n2,\"t,wo\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("3,three\n1,dup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	run := func(cmd string) string {
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(tctx, psql, "-h", host, "-p", port, "-U", "alice", "-d", "tandem", "-X", "-c", cmd).CombinedOutput()
		return string(out)
	}
	if out := run(`\copy p FROM '` + good + `' WITH (FORMAT csv, HEADER)`); !strings.Contains(out, "COPY 2") {
		t.Fatalf("psql \\copy:\n%s", out)
	}
	if out := run(`\copy p FROM '` + bad + `' WITH (FORMAT csv)`); !strings.Contains(out, "duplicate key") {
		t.Fatalf("psql \\copy of a duplicate:\n%s", out)
	}
	if got := count(t, c, "SELECT count(*) FROM p"); got != 2 {
		t.Fatalf("rows: %d, want 2", got)
	}
}

// TestReturningPgx reads RETURNING rows through the extended protocol
// (Describe reports the RETURNING columns) and checks the command tags.
func TestReturningPgx(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE r (id int PRIMARY KEY, v text DEFAULT 'd')"); err != nil {
		t.Fatal(err)
	}
	var id int64
	var v string
	if err := c.QueryRow(ctx, "INSERT INTO r (id) VALUES ($1) RETURNING id * 10, v", 4).Scan(&id, &v); err != nil || id != 40 || v != "d" {
		t.Fatalf("INSERT ... RETURNING: %d %q %v", id, v, err)
	}
	tag, err := c.Exec(ctx, "INSERT INTO r VALUES (4, 'x'), (5, 'y') ON CONFLICT (id) DO NOTHING")
	if err != nil || tag.String() != "INSERT 0 1" {
		t.Fatalf("ON CONFLICT DO NOTHING: %q %v", tag, err)
	}
	rows, err := c.Query(ctx, "UPDATE r SET v = v || '!' RETURNING id")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if rows.Err() != nil || n != 2 || rows.CommandTag().String() != "UPDATE 2" {
		t.Fatalf("UPDATE ... RETURNING: %d rows, tag %q, %v", n, rows.CommandTag(), rows.Err())
	}
}

// TestCopyFromTypedColumns checks that COPY FROM applies varchar(n),
// char(n) and numeric(p,s) as INSERT does, in text and binary format.
func TestCopyFromTypedColumns(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE emp (id int PRIMARY KEY, name varchar(5) NOT NULL, code char(2), salary numeric(10,2), hired date)"); err != nil {
		t.Fatal(err)
	}
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader("1\tann\tab\t1500.5\t2024-01-02\n2\tbob  \tc \t0.125\t\\N\n"), "COPY emp FROM STDIN")
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("text COPY: %v %v", tag, err)
	}
	var pe *pgconn.PgError
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("3\ttoolong\tx\t1\t2024-01-01\n"), "COPY emp FROM STDIN")
	if !errors.As(err, &pe) || pe.Code != "22001" || pe.Where != `COPY emp, line 1, column name: "toolong"` {
		t.Fatalf("too long name: %#v", err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("3\tcy\tx\t123456789.5\t2024-01-01\n"), "COPY emp FROM STDIN")
	if !errors.As(err, &pe) || pe.Code != "22003" {
		t.Fatalf("numeric overflow: %#v", err)
	}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"emp"}, []string{"id", "name"}, pgx.CopyFromRows([][]any{{int32(4), "toolong"}}))
	if pgCode(err) != "22001" {
		t.Fatalf("binary COPY of a too long name: %v, want 22001", err)
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"emp"}, []string{"id", "name", "code"}, pgx.CopyFromRows([][]any{{int32(5), "dee", "d   "}}))
	if err != nil || n != 1 {
		t.Fatalf("binary COPY: %d, %v", n, err)
	}
	// Text results: the numeric column's scale and char(n)'s padding.
	res, err := c.PgConn().Exec(ctx, "SELECT id, name, code, salary, hired FROM emp ORDER BY id").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res[0].Rows {
		var fields []string
		for _, v := range r {
			fields = append(fields, string(v))
		}
		got = append(got, strings.Join(fields, "|"))
	}
	want := []string{"1|ann|ab|1500.50|2024-01-02", "2|bob  |c |0.13|", "5|dee|d ||"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("rows = %q; want %q", got, want)
	}
	// Binary results through pgx: numeric(10,2) and date.
	var salary pgtype.Numeric
	var hired time.Time
	if err := c.QueryRow(ctx, "SELECT salary, hired FROM emp WHERE id = $1", 1).Scan(&salary, &hired); err != nil {
		t.Fatal(err)
	}
	if v, err := salary.Value(); err != nil || v != "1500.50" || !hired.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("binary salary, hired = %v (%v), %v", v, err, hired)
	}
}
