package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/slt/internal/slt"
)

type config struct {
	dsn           string
	freshDB       bool
	startPostgres bool
	controller    string
	replica       string
	logLevel      string
	dbName        string
	timeout       time.Duration
	showFailures  int
	showErrors    int
	failOnWrong   bool
	jsonPath      string
	progress      time.Duration
	root          string
	checkLabels   bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.dsn, "dsn", "", "PostgreSQL-wire server to run against (libpq connection string or URL)")
	flag.BoolVar(&cfg.freshDB, "fresh-db", false, "with --dsn: run each script in a database created for it (CREATE DATABASE, dropped afterwards)")
	flag.BoolVar(&cfg.startPostgres, "start-postgres", false, "start a throwaway PostgreSQL (hack/postgres.sh installs it) and run each script in a fresh database")
	flag.StringVar(&cfg.controller, "controller", "", "Tandem controller binary: start a fresh controller per script")
	flag.StringVar(&cfg.replica, "replica", "", "Tandem replica binary, with --controller")
	flag.StringVar(&cfg.logLevel, "controller-log-level", "warn", "log level of the controllers started with --controller")
	flag.StringVar(&cfg.dbName, "db-name", "postgresql", "database name for skipif/onlyif")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "limit on one statement (0: none)")
	flag.IntVar(&cfg.showFailures, "show-failures", 10, "print the first N wrong results with SQL, expected and got")
	flag.IntVar(&cfg.showErrors, "show-errors", 0, "print the first N refused records with SQL and error")
	flag.BoolVar(&cfg.failOnWrong, "fail-on-wrong", false, "exit 1 when any query returns a wrong result")
	flag.StringVar(&cfg.jsonPath, "json", "", "also write the summary as JSON to this file")
	flag.DurationVar(&cfg.progress, "progress", 10*time.Second, "interval of progress lines on stderr (0: none)")
	flag.BoolVar(&cfg.checkLabels, "check-labels", false, "also fail a labelled query whose values differ from the first query with that label")
	flag.StringVar(&cfg.root, "root", "", "show script names relative to this directory (default: as given)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: slt [flags] FILE|DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := run(ctx, cfg, flag.Args(), os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "slt: %v\n", err)
	}
	os.Exit(code)
}

// scripts expands directories into their *.test files, sorted.
func scripts(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
				found = append(found, p)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", a, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func newTarget(ctx context.Context, cfg config) (target, error) {
	switch {
	case cfg.controller != "":
		if cfg.replica == "" {
			return nil, errors.New("--controller needs --replica")
		}
		return &tandemTarget{controller: cfg.controller, replica: cfg.replica, logLevel: cfg.logLevel}, nil
	case cfg.startPostgres:
		return startPostgres(ctx, "")
	case cfg.dsn != "":
		pc, err := pgx.ParseConfig(cfg.dsn)
		if err != nil {
			return nil, fmt.Errorf("--dsn: %w", err)
		}
		return &dsnTarget{cfg: pc, fresh: cfg.freshDB}, nil
	}
	return nil, errors.New("give one of --dsn, --start-postgres or --controller")
}

func run(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) (int, error) {
	files, err := scripts(args)
	if err != nil {
		return 2, err
	}
	tgt, err := newTarget(ctx, cfg)
	if err != nil {
		return 2, err
	}
	defer tgt.close()

	rep := newReport(cfg)
	broken := false
	for i, path := range files {
		name := path
		if cfg.root != "" {
			if rel, err := filepath.Rel(cfg.root, path); err == nil {
				name = rel
			}
		}
		fs := rep.file(name)
		if err := runScript(ctx, cfg, tgt, i, path, fs, rep, stderr); err != nil {
			fs.Broken = err.Error()
			broken = true
			fmt.Fprintf(stderr, "slt: %s: %v\n", name, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	rep.print(stdout)
	if cfg.jsonPath != "" {
		if err := rep.writeJSON(cfg.jsonPath); err != nil {
			return 2, err
		}
	}
	switch {
	case broken:
		return 2, errors.New("the run broke (see above)")
	case cfg.failOnWrong && rep.total().Wrong > 0:
		return 1, fmt.Errorf("%d wrong results", rep.total().Wrong)
	}
	return 0, nil
}

func runScript(ctx context.Context, cfg config, tgt target, i int, path string, fs *fileSummary, rep *report, stderr io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	recs, err := slt.Parse(path, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	total := 0
	for j := range recs {
		if k := recs[j].Kind; (k == slt.Statement || k == slt.Query) && recs[j].Applies(cfg.dbName) {
			total++
		}
	}
	conn, done, err := tgt.open(ctx, i)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	last := start
	opts := slt.Options{
		DB:          cfg.dbName,
		CheckLabels: cfg.checkLabels,
		OnResult: func(r slt.Result) {
			rep.add(fs, r)
			if cfg.progress > 0 && time.Since(last) >= cfg.progress {
				last = time.Now()
				fmt.Fprintf(stderr, "slt: %s %d/%d records, %d passed, %d wrong, %d errored (%s)\n",
					fs.Name, fs.Records, total, fs.Passed, fs.Wrong, fs.Errored, time.Since(start).Round(time.Second))
			}
		},
	}
	if cfg.timeout > 0 {
		opts.StatementContext = func(c context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(c, cfg.timeout)
		}
	}
	err = slt.Run(ctx, conn, recs, opts)
	fs.Seconds = time.Since(start).Seconds()
	fmt.Fprintf(stderr, "slt: %s done: %d/%d passed, %d wrong, %d errored in %.0fs\n",
		fs.Name, fs.Passed, fs.Records, fs.Wrong, fs.Errored, fs.Seconds)
	return err
}
