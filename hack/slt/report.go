package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tandemdb/tandem/hack/slt/internal/slt"
)

// fileSummary counts the verdicts on one script. Records are the ones the
// runner ran (skipped ones excluded), as the corpus README counts them.
type fileSummary struct {
	Name         string  `json:"name"`
	Records      int     `json:"records"`
	Passed       int     `json:"passed"`
	Wrong        int     `json:"wrong"`
	Errored      int     `json:"errored"`
	Unsupported  int     `json:"unsupported"` // errored with SQLSTATE 0A000
	UnexpectedOK int     `json:"unexpected_ok"`
	Skipped      int     `json:"skipped"`
	Seconds      float64 `json:"seconds"`
	Broken       string  `json:"broken,omitempty"`
}

// failure is one wrong or refused record, kept for printing and JSON.
type failure struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Outcome  string   `json:"outcome"`
	SQL      string   `json:"sql"`
	Error    string   `json:"error,omitempty"`
	Diff     string   `json:"diff,omitempty"`
	Expected []string `json:"expected,omitempty"`
	Got      []string `json:"got,omitempty"`
}

type reason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

type report struct {
	cfg     config
	files   []*fileSummary
	reasons map[string]int
	// wrong lists every wrong result (they are bugs, and few); errors
	// keeps only as many refusals as asked to print.
	wrong  []failure
	errors []failure
}

func newReport(cfg config) *report {
	return &report{cfg: cfg, reasons: map[string]int{}}
}

func (r *report) file(name string) *fileSummary {
	fs := &fileSummary{Name: name}
	r.files = append(r.files, fs)
	return fs
}

func (r *report) add(fs *fileSummary, res slt.Result) {
	if res.Outcome == slt.Skipped {
		fs.Skipped++
		return
	}
	fs.Records++
	rec := res.Record
	f := failure{File: fs.Name, Line: rec.Line, Outcome: res.Outcome.String(), SQL: rec.SQL}
	switch res.Outcome {
	case slt.Passed:
		fs.Passed++
	case slt.Wrong:
		fs.Wrong++
		f.Diff, f.Got = res.Diff, res.Got
		if rec.Hashed {
			f.Expected = []string{fmt.Sprintf("%d values hashing to %s", rec.HashCount, rec.Hash)}
		} else {
			f.Expected = rec.Expected
		}
		r.wrong = append(r.wrong, f)
	case slt.Errored:
		fs.Errored++
		var pgErr *pgconn.PgError
		if errors.As(res.Err, &pgErr) && pgErr.Code == "0A000" {
			fs.Unsupported++
		}
		r.reasons[reasonOf(res.Err)]++
		if len(r.errors) < r.cfg.showErrors {
			f.Error = res.Err.Error()
			r.errors = append(r.errors, f)
		}
	case slt.UnexpectedOK:
		fs.UnexpectedOK++
	}
}

var (
	quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	// A word with a digit in it is a number or a generated name such as
	// view_1_tab0_153.
	number = regexp.MustCompile(`\b[A-Za-z_]*[0-9][A-Za-z0-9_.]*\b`)
)

// reasonOf groups refusals: SQLSTATE and message with names and numbers
// blanked out, so that "column \"x\" ..." and "column \"y\" ..." count
// together.
func reasonOf(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		msg := err.Error()
		if i := strings.IndexByte(msg, ':'); i > 0 {
			msg = msg[:i]
		}
		return "(client) " + msg
	}
	msg := quoted.ReplaceAllString(pgErr.Message, "…")
	msg = number.ReplaceAllString(msg, "N")
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	return pgErr.Code + " " + msg
}

func (r *report) total() fileSummary {
	t := fileSummary{Name: "total"}
	for _, f := range r.files {
		t.Records += f.Records
		t.Passed += f.Passed
		t.Wrong += f.Wrong
		t.Errored += f.Errored
		t.Unsupported += f.Unsupported
		t.UnexpectedOK += f.UnexpectedOK
		t.Skipped += f.Skipped
		t.Seconds += f.Seconds
	}
	return t
}

func (r *report) topReasons() []reason {
	var out []reason
	for k, n := range r.reasons {
		out = append(out, reason{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func (r *report) print(w io.Writer) {
	for i, f := range r.wrong {
		if i >= r.cfg.showFailures {
			fmt.Fprintf(w, "... and %d more wrong results\n\n", len(r.wrong)-i)
			break
		}
		fmt.Fprintf(w, "WRONG %s:%d: %s\n%s\n  expected: %s\n  got:      %s\n\n", f.File, f.Line, f.Diff,
			indent(f.SQL), clip(f.Expected), clip(f.Got))
	}
	for _, f := range r.errors {
		fmt.Fprintf(w, "ERROR %s:%d: %s\n%s\n\n", f.File, f.Line, f.Error, indent(f.SQL))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	width := len("total")
	for _, f := range r.files {
		n := len(f.Name)
		if f.Broken != "" {
			n += len(" (BROKEN)")
		}
		width = max(width, n)
	}
	fmt.Fprintf(tw, "%-*s\t", width, "file")
	fmt.Fprintln(tw, "records\tpassed\twrong\terrored\t(0A000)\tunexpected-ok\tskipped\tpass\tseconds\t")
	row := func(f fileSummary) {
		name := f.Name
		if f.Broken != "" {
			name += " (BROKEN)"
		}
		// Padded here because the writer right-aligns every cell.
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%.0f\t\n", width, name, f.Records, f.Passed, f.Wrong,
			f.Errored, f.Unsupported, f.UnexpectedOK, f.Skipped, pct(f.Passed, f.Records), f.Seconds)
	}
	for _, f := range r.files {
		row(*f)
	}
	row(r.total())
	tw.Flush()
	if reasons := r.topReasons(); len(reasons) > 0 {
		fmt.Fprintln(w, "\nrefusals by reason (SQLSTATE message):")
		for i, rs := range reasons {
			if i == 20 {
				fmt.Fprintf(w, "  ... %d more reasons\n", len(reasons)-i)
				break
			}
			fmt.Fprintf(w, "%7d  %s\n", rs.Count, rs.Reason)
		}
	}
}

func indent(sql string) string {
	return "  " + strings.ReplaceAll(sql, "\n", "\n  ")
}

// clip shows at most 20 values of a result.
func clip(v []string) string {
	if len(v) > 20 {
		return strings.Join(v[:20], " ") + fmt.Sprintf(" ... (%d values)", len(v))
	}
	return strings.Join(v, " ")
}

func (r *report) writeJSON(path string) error {
	files := make([]fileSummary, 0, len(r.files))
	for _, f := range r.files {
		files = append(files, *f)
	}
	out := struct {
		Files   []fileSummary `json:"files"`
		Total   fileSummary   `json:"total"`
		Reasons []reason      `json:"reasons"`
		Wrong   []failure     `json:"wrong"`
	}{files, r.total(), r.topReasons(), r.wrong}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}
