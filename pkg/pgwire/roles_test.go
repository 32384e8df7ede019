package pgwire

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

func dial(addr, user, extra string) error {
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=%s database=tandem sslmode=disable %s", host, port, user, extra))
	if err == nil {
		c.Close(ctx)
	}
	return err
}

// TestCatalogRolesAuthenticate: with a configured password the bootstrap
// superuser logs in by it, roles made with CREATE ROLE ... LOGIN PASSWORD
// by theirs (checked against the catalog's SCRAM verifier), and a wrong
// password, an unknown user, a role without LOGIN and a role without a
// password are all refused with the same 28P01 (except NOLOGIN with the
// right password: 28000, as PostgreSQL). Under loopback trust a NOLOGIN
// role is refused too.
func TestCatalogRolesAuthenticate(t *testing.T) {
	addr := startServer(t, Config{Passwords: map[string]string{"alice": "s3cret"}})
	admin := connect(t, addr, "password=s3cret")
	if _, err := admin.Exec(context.Background(), `CREATE ROLE bob LOGIN PASSWORD 'b0b';
		CREATE ROLE carol PASSWORD 'c4rol'; CREATE USER dave`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ user, password, code string }{
		{"bob", "b0b", ""},
		{"bob", "wrong", "28P01"},
		{"nobody", "b0b", "28P01"},
		{"carol", "wrong", "28P01"},
		{"carol", "c4rol", "28000"},
		{"dave", "", "28P01"},
		{"dave", "x", "28P01"},
	} {
		err := dial(addr, tc.user, "password="+tc.password)
		if pgCode(err) != tc.code && !(tc.code == "" && err == nil) {
			t.Errorf("%s/%q: %v, want %q", tc.user, tc.password, err, tc.code)
		}
	}
	if _, err := admin.Exec(context.Background(), `ALTER ROLE bob PASSWORD 'new'`); err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, "bob", "password=b0b"); pgCode(err) != "28P01" {
		t.Errorf("old password after ALTER ROLE: %v", err)
	}
	if err := dial(addr, "bob", "password=new"); err != nil {
		t.Errorf("new password after ALTER ROLE: %v", err)
	}

	f := sqltest.New()
	trust := startServerOn(t, f, Config{})
	if _, err := connect(t, trust, "").Exec(context.Background(), "CREATE ROLE quiet"); err != nil {
		t.Fatal(err)
	}
	if err := dial(trust, "quiet", ""); pgCode(err) != "28000" {
		t.Errorf("NOLOGIN role under trust: %v", err)
	}
}
