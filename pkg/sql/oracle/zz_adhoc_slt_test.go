package oracle

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Ad-hoc (not committed): SLT_FILE=... go test -run TestAdhocSLT
func TestAdhocSLT(t *testing.T) {
	path := os.Getenv("SLT_FILE")
	if path == "" {
		t.Skip()
	}
	text, _ := os.ReadFile(path)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	pg, err := StartPostgres(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	admin, _ := pg.Connect(ctx, "postgres")
	admin.Exec(ctx, "CREATE DATABASE slt")
	pconn, _ := pg.Connect(ctx, "slt")
	tconn := tandemTarget(t, ctx)
	blocks := strings.Split(strings.ReplaceAll(string(text), "\r", ""), "\n\n")
	codes := map[string]int{}
	var ok, mism, pgerr, total int
	for _, b := range blocks {
		lines := strings.Split(strings.TrimSpace(b), "\n")
		skip := false
		for len(lines) > 0 && (strings.HasPrefix(lines[0], "skipif") || strings.HasPrefix(lines[0], "onlyif") || strings.HasPrefix(lines[0], "#") || strings.HasPrefix(lines[0], "hash-threshold")) {
			f := strings.Fields(lines[0])
			if (f[0] == "skipif" && f[1] == "postgresql") || (f[0] == "onlyif" && f[1] != "postgresql") {
				skip = true
			}
			lines = lines[1:]
		}
		if skip || len(lines) < 2 {
			continue
		}
		var sqlLines []string
		for _, l := range lines[1:] {
			if l == "----" {
				break
			}
			sqlLines = append(sqlLines, l)
		}
		sql := strings.Join(sqlLines, "\n")
		isQuery := strings.HasPrefix(lines[0], "query")
		trows, tcode, terr := execText(ctx, tconn.PgConn(), sql)
		prows, pcode, perr := execText(ctx, pconn.PgConn(), sql)
		if terr != nil || perr != nil {
			t.Fatalf("%v %v", terr, perr)
		}
		if !isQuery {
			continue
		}
		total++
		if pcode != "" {
			pgerr++
			continue
		}
		if tcode != "" {
			codes[tcode]++
			if os.Getenv("SLT_VERBOSE") != "" {
				fmt.Printf("ERR %s: %s\n", tcode, sql)
			}
			continue
		}
		slices.Sort(trows)
		slices.Sort(prows)
		if slices.Equal(trows, prows) {
			ok++
		} else {
			mism++
			fmt.Printf("MISMATCH: %s\n  t=%v\n  p=%v\n", sql, trows, prows)
		}
	}
	fmt.Printf("total %d ok %d mismatch %d pgerr %d tandem errors %v\n", total, ok, mism, pgerr, codes)
}
