package slt

import (
	"context"
	"errors"
	"fmt"
)

// Conn is the database a script runs against.
type Conn interface {
	// Exec runs a statement, discarding any rows.
	Exec(ctx context.Context, sql string) error
	// Query runs a query and returns its rows: every value in text format,
	// nil for NULL.
	Query(ctx context.Context, sql string) ([][][]byte, error)
}

// ErrBroken wraps an error after which the run cannot go on (the server
// died or cannot be reached): Run stops the script and returns it, rather
// than counting every remaining record as refused.
var ErrBroken = errors.New("connection to the server broken")

// Outcome is the verdict on one record.
type Outcome int

const (
	// Passed: the statement did what was expected, or the query's values
	// are the expected ones.
	Passed Outcome = iota + 1
	// Wrong: the query ran and returned other values. A wrong answer.
	Wrong
	// Errored: a statement expected to succeed, or a query, failed. A gap
	// (unsupported feature) or a bug, told apart by the SQLSTATE.
	Errored
	// UnexpectedOK: a `statement error` succeeded. The corpus expects
	// SQLite's refusals, which PostgreSQL does not always share.
	UnexpectedOK
	// Skipped: a skipif or onlyif condition excluded the record.
	Skipped
)

func (o Outcome) String() string {
	switch o {
	case Passed:
		return "passed"
	case Wrong:
		return "wrong"
	case Errored:
		return "errored"
	case UnexpectedOK:
		return "unexpected-ok"
	case Skipped:
		return "skipped"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is the verdict on one Statement or Query record.
type Result struct {
	Record  *Record
	Outcome Outcome
	// Err is the database's error for Errored.
	Err error
	// Got holds the formatted, sorted values of a Wrong query, and Diff
	// describes the first difference.
	Got  []string
	Diff string
	// got holds the formatted, sorted values of every query that ran,
	// for the label check.
	got []string
}

// Options control Run.
type Options struct {
	// DB is the name the runner gives itself for skipif/onlyif, e.g.
	// "postgresql".
	DB string
	// StatementContext, when set, derives the context of each statement,
	// e.g. to give it a timeout.
	StatementContext func(context.Context) (context.Context, context.CancelFunc)
	// OnResult is called for every Statement and Query record, in order.
	OnResult func(Result)
	// CheckLabels makes a query with a label also fail as Wrong when its
	// values differ from those of the first query run with that label:
	// the corpus gives the variants of one query written for different
	// databases the same label.
	CheckLabels bool
}

// Run executes records in order against conn, reporting every Statement
// and Query through opts.OnResult. It returns early only when ctx ends or
// conn returns an error wrapping ErrBroken.
func Run(ctx context.Context, conn Conn, recs []Record, opts Options) error {
	report := opts.OnResult
	if report == nil {
		report = func(Result) {}
	}
	// labels holds, per label, the hash of the first result and its line.
	labels := map[string]labelSeen{}
	for i := range recs {
		rec := &recs[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		switch rec.Kind {
		case Halt:
			if rec.Applies(opts.DB) {
				return nil
			}
			continue
		case Statement, Query:
		default:
			continue
		}
		if !rec.Applies(opts.DB) {
			report(Result{Record: rec, Outcome: Skipped})
			continue
		}
		res, err := runOne(ctx, conn, rec, opts)
		if err != nil {
			return err
		}
		if opts.CheckLabels {
			checkLabel(labels, &res)
		}
		if err := ctx.Err(); err != nil {
			// Interrupted: the record's failure says nothing about it.
			return err
		}
		report(res)
	}
	return nil
}

type labelSeen struct {
	hash string
	line int
}

func checkLabel(labels map[string]labelSeen, res *Result) {
	rec := res.Record
	if rec.Kind != Query || rec.Label == "" || res.got == nil {
		return
	}
	h := HashValues(res.got)
	seen, ok := labels[rec.Label]
	if !ok {
		labels[rec.Label] = labelSeen{hash: h, line: rec.Line}
		return
	}
	if seen.hash != h && res.Outcome == Passed {
		res.Outcome = Wrong
		res.Got = res.got
		res.Diff = fmt.Sprintf("values differ from those of line %d, which has the same label %s", seen.line, rec.Label)
	}
}

func runOne(ctx context.Context, conn Conn, rec *Record, opts Options) (Result, error) {
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.StatementContext != nil {
		sctx, cancel = opts.StatementContext(ctx)
	}
	defer cancel()
	if rec.Kind == Statement {
		err := conn.Exec(sctx, rec.SQL)
		switch {
		case errors.Is(err, ErrBroken):
			return Result{}, fmt.Errorf("line %d: %w", rec.Line, err)
		case err != nil && rec.ExpectError, err == nil && !rec.ExpectError:
			return Result{Record: rec, Outcome: Passed}, nil
		case err != nil:
			return Result{Record: rec, Outcome: Errored, Err: err}, nil
		default:
			return Result{Record: rec, Outcome: UnexpectedOK}, nil
		}
	}
	rows, err := conn.Query(sctx, rec.SQL)
	if errors.Is(err, ErrBroken) {
		return Result{}, fmt.Errorf("line %d: %w", rec.Line, err)
	}
	if err != nil {
		return Result{Record: rec, Outcome: Errored, Err: err}, nil
	}
	got, err := FormatRows(rec.Types, rows)
	if err != nil {
		return Result{Record: rec, Outcome: Wrong, Diff: err.Error()}, nil
	}
	SortValues(got, len(rec.Types), rec.Sort)
	if diff := Check(rec, got); diff != "" {
		return Result{Record: rec, Outcome: Wrong, Got: got, Diff: diff, got: got}, nil
	}
	return Result{Record: rec, Outcome: Passed, got: got}, nil
}
