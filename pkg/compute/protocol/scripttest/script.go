package scripttest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Process is one process of the replica under test.
type Process struct {
	GRPCAddr string // compute protocol endpoint
	HTTPAddr string // internal HTTP endpoint (/metrics)
}

// Replica is the replica under test.
type Replica struct {
	Processes []Process
}

// Options tune a run.
type Options struct {
	// Vars are the script's variables; START defaults to ten seconds ago,
	// rounded down to a second, in milliseconds.
	Vars map[string]int64
	// Timeout bounds each expectation; zero means 20s.
	Timeout time.Duration
	// CPU, if set, returns the CPU time the replica's processes have used:
	// an expectation then fails only once the replica stalls (see
	// waitContext), not while it works slowly.
	CPU func() time.Duration
}

// Run runs the script file at path against r and fails t on the first
// error.
func Run(t testing.TB, r Replica, path string, opts Options) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := RunScript(t.Context(), r, filepath.Dir(path), string(text), opts); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// RunScript runs a script's text against r; dir resolves @FILE arguments.
func RunScript(ctx context.Context, r Replica, dir, text string, opts Options) error {
	vars := map[string]int64{"START": (time.Now().UnixMilli() - 10_000) / 1000 * 1000}
	for k, v := range opts.Vars {
		vars[k] = v
	}
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	rn := &runner{ctx: ctx, r: r, dir: dir, vars: vars, timeout: opts.Timeout, cpu: opts.CPU,
		conns: map[string][]*stream{}, uuids: map[string]string{}}
	defer rn.closeAll()
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expanded, err := rn.expand(line)
		if err == nil {
			err = rn.step(expanded)
		}
		if err == nil {
			err = rn.violations()
		}
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", n, line, err)
		}
	}
	return rn.violations()
}

type runner struct {
	ctx     context.Context
	r       Replica
	dir     string
	vars    map[string]int64
	timeout time.Duration
	cpu     func() time.Duration
	conns   map[string][]*stream
	uuids   map[string]string
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)([+-]\d+)?\}`)

func (rn *runner) expand(line string) (string, error) {
	var err error
	out := varRef.ReplaceAllStringFunc(line, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		v, ok := rn.vars[sub[1]]
		if !ok {
			err = fmt.Errorf("unknown variable %s", sub[1])
			return m
		}
		if sub[2] != "" {
			d, _ := strconv.ParseInt(sub[2], 10, 64)
			v += d
		}
		return strconv.FormatInt(v, 10)
	})
	return out, err
}

func (rn *runner) closeAll() {
	for _, ss := range rn.conns {
		for _, s := range ss {
			s.close()
		}
	}
}

func (rn *runner) violations() error {
	var v []string
	for _, ss := range rn.conns {
		for _, s := range ss {
			v = append(v, s.takeViolations()...)
		}
	}
	if len(v) > 0 {
		return fmt.Errorf("protocol invariants violated: %s", strings.Join(v, "; "))
	}
	return nil
}

// uuid maps a script's peek name to a uuid.
func (rn *runner) uuid(name string) string {
	if u, ok := rn.uuids[name]; ok {
		return u
	}
	u := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(rn.uuids)+1)
	rn.uuids[name] = u
	return u
}

func (rn *runner) conn(name string) ([]*stream, error) {
	ss, ok := rn.conns[name]
	if !ok {
		return nil, fmt.Errorf("no connection %q", name)
	}
	return ss, nil
}

func (rn *runner) step(line string) error {
	f := strings.Fields(line)
	need := func(n int) error {
		if len(f) < n {
			return fmt.Errorf("want at least %d fields", n)
		}
		return nil
	}
	switch f[0] {
	case "connect":
		if err := need(3); err != nil {
			return err
		}
		if old, ok := rn.conns[f[1]]; ok {
			for _, s := range old {
				s.close()
			}
		}
		var ss []*stream
		for i, p := range rn.r.Processes {
			s, err := dial(rn.ctx, i, p.GRPCAddr)
			if err != nil {
				return err
			}
			ss = append(ss, s)
			if err := s.send(&computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: f[2]}}}); err != nil {
				return err
			}
		}
		rn.conns[f[1]] = ss
		return nil
	case "pause", "resume":
		ss, err := rn.conn(f[1])
		if err != nil {
			return err
		}
		for _, s := range ss {
			if f[0] == "pause" {
				s.pause()
			} else {
				s.resume()
			}
		}
		return nil
	case "disconnect":
		ss, err := rn.conn(f[1])
		if err != nil {
			return err
		}
		for _, s := range ss {
			s.close()
		}
		delete(rn.conns, f[1])
		return nil
	case "send":
		if err := need(3); err != nil {
			return err
		}
		ss, err := rn.conn(f[1])
		if err != nil {
			return err
		}
		cmd, err := rn.command(f[2], f[3:], restAfter(line, 3))
		if err != nil {
			return err
		}
		for _, s := range ss {
			if err := s.send(cmd); err != nil {
				return err
			}
		}
		return nil
	case "expect":
		if err := need(3); err != nil {
			return err
		}
		ss, err := rn.conn(f[1])
		if err != nil {
			return err
		}
		ctx, cancel := rn.waitContext()
		defer cancel()
		// rest is what follows "expect C KIND P": the rows of a rows
		// expectation.
		return rn.expect(ctx, ss, f[2], f[3:], restAfter(line, 4))
	case "expect-none":
		if err := need(3); err != nil {
			return err
		}
		ss, err := rn.conn(f[1])
		if err != nil {
			return err
		}
		uuid := rn.uuid(f[2])
		for _, s := range ss {
			if r := s.anyWithin(300*time.Millisecond, func(r *computepb.Response) bool { return r.GetPeekResponse().GetUuid() == uuid }); r != nil {
				return fmt.Errorf("process %d: unexpected response %v", s.proc, r)
			}
		}
		return nil
	case "metric":
		if err := need(4); err != nil {
			return err
		}
		return rn.metric(f[1], f[2], f[3])
	case "sleep":
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return err
		}
		time.Sleep(d)
		return nil
	}
	return fmt.Errorf("unknown directive %q", f[0])
}

// restAfter returns line without its first n fields.
func restAfter(line string, n int) string {
	s := line
	for range n {
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return ""
		}
		s = s[i:]
	}
	return strings.TrimSpace(s)
}

func (rn *runner) command(kind string, args []string, rest string) (*computepb.Command, error) {
	arg := func(i int) (string, error) {
		if i >= len(args) {
			return "", fmt.Errorf("%s: missing argument %d", kind, i+1)
		}
		return args[i], nil
	}
	switch kind {
	case "create_instance":
		ci := &computepb.CreateInstance{}
		if rest != "" {
			if err := protojson.Unmarshal([]byte(rest), ci); err != nil {
				return nil, fmt.Errorf("create_instance: %w", err)
			}
		}
		return &computepb.Command{Kind: &computepb.Command_CreateInstance{CreateInstance: ci}}, nil
	case "init_complete":
		return &computepb.Command{Kind: &computepb.Command_InitializationComplete{InitializationComplete: &computepb.InitializationComplete{}}}, nil
	case "create_dataflow":
		b := []byte(rest)
		if strings.HasPrefix(rest, "@") {
			var err error
			if b, err = os.ReadFile(filepath.Join(rn.dir, rest[1:])); err != nil {
				return nil, err
			}
			s, err := rn.expand(string(b))
			if err != nil {
				return nil, err
			}
			b = []byte(s)
		}
		// Scripts write descriptions in the plan's JSON form, which is
		// readable; the wire carries the protobuf message.
		var d plan.DataflowDescription
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("create_dataflow: %w", err)
		}
		pd, err := protocol.DataflowToProto(&d)
		if err != nil {
			return nil, fmt.Errorf("create_dataflow: %w", err)
		}
		return &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: pd}}}, nil
	case "schedule":
		id, err := arg(0)
		if err != nil {
			return nil, err
		}
		return &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: wireID(id)}}}, nil
	case "allow_compaction":
		if len(args) < 2 {
			return nil, errors.New("allow_compaction: want ID FRONTIER")
		}
		f, err := frontier.Parse(args[1])
		if err != nil {
			return nil, err
		}
		return &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
			Id: wireID(args[0]), Frontier: protocol.FrontierToProto(f)}}}, nil
	case "peek":
		return rn.peek(args)
	case "cancel_peek":
		p, err := arg(0)
		if err != nil {
			return nil, err
		}
		return &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: rn.uuid(p)}}}, nil
	case "update_configuration":
		params := map[string]string{}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				return nil, fmt.Errorf("update_configuration: %q is not K=V", a)
			}
			params[k] = v
		}
		return &computepb.Command{Kind: &computepb.Command_UpdateConfiguration{UpdateConfiguration: &computepb.UpdateConfiguration{Parameters: params}}}, nil
	case "raw":
		c := &computepb.Command{}
		if err := protojson.Unmarshal([]byte(rest), c); err != nil {
			return nil, fmt.Errorf("raw: %w", err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("unknown command %q", kind)
}

// takeNext is stream.take bounded by the runner's timeout from now.
func (rn *runner) takeNext(s *stream, what string, match func(*computepb.Response) bool) (*computepb.Response, error) {
	ctx, cancel := rn.waitContext()
	defer cancel()
	return s.take(ctx, what, match)
}

func (rn *runner) expect(ctx context.Context, ss []*stream, kind string, args []string, rest string) error {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	peekOf := func(uuid string) func(*computepb.Response) bool {
		return func(r *computepb.Response) bool { return r.GetPeekResponse().GetUuid() == uuid }
	}
	switch kind {
	case "rows", "rows-ordered", "count", "stashed":
		uuid := rn.uuid(arg(0))
		var got []string
		chunks := 0
		for _, s := range ss {
			for {
				// A streamed answer may take longer than the timeout on
				// a loaded machine: the timeout bounds the wait for each
				// response (a stalled stream), not the whole stream.
				r, err := rn.takeNext(s, "peek "+arg(0), peekOf(uuid))
				if err != nil {
					return err
				}
				pr := r.GetPeekResponse()
				if st := pr.GetStashed(); st != nil {
					chunks++
					got = append(got, formatRows(st.GetRows())...)
					if st.GetFinal() {
						break
					}
					continue
				}
				if pr.GetRows() == nil {
					return fmt.Errorf("process %d: peek %s answered %v", s.proc, arg(0), pr)
				}
				got = append(got, formatRows(pr.GetRows().GetRows())...)
				break
			}
		}
		switch kind {
		case "count", "stashed":
			n, err := strconv.Atoi(arg(1))
			if err != nil {
				return err
			}
			if c := countRows(got); c != n {
				return fmt.Errorf("peek %s: %d rows, want %d", arg(0), c, n)
			}
			if kind == "stashed" && chunks <= len(ss) {
				return fmt.Errorf("peek %s: %d stashed chunks from %d processes, want more than one each", arg(0), chunks, len(ss))
			}
			return nil
		}
		want, err := splitRows(rest)
		if err != nil {
			return err
		}
		if kind == "rows" {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("peek %s: rows %v, want %v", arg(0), got, want)
		}
		return nil
	case "peek-error":
		uuid := rn.uuid(arg(0))
		for _, s := range ss {
			r, err := s.take(ctx, "peek "+arg(0), peekOf(uuid))
			if err != nil {
				return err
			}
			if e := r.GetPeekResponse().GetError(); e == nil || e.GetSqlstate() != arg(1) {
				return fmt.Errorf("process %d: peek %s answered %v, want error %s", s.proc, arg(0), r, arg(1))
			}
		}
		return nil
	case "stash-chunk":
		uuid := rn.uuid(arg(0))
		for _, s := range ss {
			r, err := s.take(ctx, "peek "+arg(0), peekOf(uuid))
			if err != nil {
				return err
			}
			if st := r.GetPeekResponse().GetStashed(); st == nil || st.GetFinal() {
				return fmt.Errorf("process %d: peek %s answered %v, want a non-final stashed chunk", s.proc, arg(0), r)
			}
		}
		return nil
	case "stash-canceled":
		uuid := rn.uuid(arg(0))
		min, err := strconv.Atoi(arg(1))
		if err != nil {
			return err
		}
		for _, s := range ss {
			chunks := 0
			for {
				r, err := rn.takeNext(s, "peek "+arg(0), peekOf(uuid))
				if err != nil {
					return err
				}
				pr := r.GetPeekResponse()
				if st := pr.GetStashed(); st != nil && !st.GetFinal() {
					chunks++
					continue
				}
				if pr.GetCanceled() == nil {
					return fmt.Errorf("process %d: peek %s ended with %v after %d chunks, want canceled", s.proc, arg(0), pr, chunks)
				}
				break
			}
			if chunks < min {
				return fmt.Errorf("process %d: peek %s canceled after %d chunks, want at least %d", s.proc, arg(0), chunks, min)
			}
		}
		return nil
	case "canceled":
		uuid := rn.uuid(arg(0))
		for _, s := range ss {
			r, err := s.take(ctx, "peek "+arg(0), peekOf(uuid))
			if err != nil {
				return err
			}
			if r.GetPeekResponse().GetCanceled() == nil {
				return fmt.Errorf("process %d: peek %s answered %v, want canceled", s.proc, arg(0), r)
			}
		}
		return nil
	case "error":
		for _, s := range ss {
			r, err := s.take(ctx, "command error "+arg(0), func(r *computepb.Response) bool { return r.GetCommandError() != nil })
			if err != nil {
				return err
			}
			if e := r.GetCommandError(); e.GetCommand() != arg(0) || e.GetSqlstate() != arg(1) {
				return fmt.Errorf("process %d: got %v, want %s error %s", s.proc, e, arg(0), arg(1))
			}
		}
		return nil
	case "frontier":
		id := arg(0)
		cond := arg(1)
		var match func(*computepb.Frontier) bool
		switch {
		case cond == "write=[]":
			match = func(f *computepb.Frontier) bool { return f.GetClosed() }
		case strings.HasPrefix(cond, "write>="):
			t, err := strconv.ParseUint(strings.TrimPrefix(cond, "write>="), 10, 64)
			if err != nil {
				return err
			}
			match = func(f *computepb.Frontier) bool { return f != nil && (f.GetClosed() || f.GetTime() >= t) }
		default:
			return fmt.Errorf("frontier condition %q", cond)
		}
		for _, s := range ss {
			if _, err := s.take(ctx, "frontier "+id+" "+cond, func(r *computepb.Response) bool {
				f := r.GetFrontiers()
				return printID(f.GetId()) == id && f.GetWrite() != nil && match(f.GetWrite())
			}); err != nil {
				return err
			}
		}
		return nil
	case "hydrated":
		id := arg(0)
		for _, s := range ss {
			if _, err := s.take(ctx, "hydration of "+id, func(r *computepb.Response) bool {
				for _, c := range r.GetStatus().GetCollections() {
					if printID(c.GetId()) == id && c.GetHydrated() {
						return true
					}
				}
				return false
			}); err != nil {
				return err
			}
		}
		return nil
	case "subscribe":
		id := arg(0)
		if arg(1) == "dropped" {
			for _, s := range ss {
				if _, err := s.take(ctx, "subscribe "+id+" dropped", func(r *computepb.Response) bool {
					return printID(r.GetSubscribeResponse().GetId()) == id && r.GetSubscribeResponse().GetDropped() != nil
				}); err != nil {
					return err
				}
			}
			return nil
		}
		n, err := strconv.Atoi(strings.TrimPrefix(arg(1), "rows>="))
		if err != nil {
			return fmt.Errorf("subscribe condition %q", arg(1))
		}
		// The rows are spread over the processes' shards: gather from all
		// until the total suffices.
		total := 0
		isUpdates := func(r *computepb.Response) bool {
			return printID(r.GetSubscribeResponse().GetId()) == id && r.GetSubscribeResponse().GetUpdates() != nil
		}
		for total < n {
			for _, s := range ss {
				for _, r := range s.drain(isUpdates) {
					for _, u := range r.GetSubscribeResponse().GetUpdates().GetUpdates() {
						total += int(u.GetDiff())
					}
				}
			}
			if total >= n {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("subscribe %s: %d rows, want at least %d", id, total, n)
			case <-time.After(20 * time.Millisecond):
			}
		}
		return nil
	case "ended":
		want := arg(0)
		for _, s := range ss {
			err, ok := s.waitEnd(ctx)
			if !ok {
				return fmt.Errorf("process %d: stream did not end", s.proc)
			}
			if got := status.Code(err); got.String() != want && !(want == "OK" && errors.Is(err, io.EOF)) {
				return fmt.Errorf("process %d: stream ended with %v, want %s", s.proc, err, want)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown expectation %q", kind)
}

func formatRows(rs []*computepb.RowCount) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		s := row.Row(r.GetRow()).String()
		if r.GetCount() != 1 {
			s += "x" + strconv.FormatUint(r.GetCount(), 10)
		}
		out = append(out, s)
	}
	return out
}

var rowCountSuffix = regexp.MustCompile(`\)x(\d+)$`)

func countRows(rows []string) int {
	n := 0
	for _, r := range rows {
		if m := rowCountSuffix.FindStringSubmatch(r); m != nil {
			c, _ := strconv.Atoi(m[1])
			n += c
			continue
		}
		n++
	}
	return n
}

// splitRows splits "(1) ('a b', 2)x3" into its top-level parenthesized rows.
func splitRows(s string) ([]string, error) {
	var out []string
	depth, start := 0, -1
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote:
			if c == '\'' {
				inQuote = false
			}
		case c == '\'':
			inQuote = true
		case c == '(':
			if depth == 0 {
				start = i
			}
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced rows %q", s)
			}
		case c == ' ' && depth == 0:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		}
	}
	if depth != 0 || inQuote {
		return nil, fmt.Errorf("unbalanced rows %q", s)
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out, nil
}

// metric checks NAME{LABELS} OP N, summed over processes, polling until
// it holds or the timeout passes.
func (rn *runner) metric(sel, op, val string) error {
	want, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return err
	}
	name, labels, _ := strings.Cut(sel, "{")
	labels = strings.TrimSuffix(labels, "}")
	var wantLabels []string
	if labels != "" {
		wantLabels = strings.Split(labels, ",")
	}
	deadline := time.Now().Add(rn.timeout)
	for {
		sum := 0.0
		for _, p := range rn.r.Processes {
			v, err := scrape(rn.ctx, p.HTTPAddr, name, wantLabels)
			if err != nil {
				return err
			}
			sum += v
		}
		ok := false
		switch op {
		case ">=":
			ok = sum >= want
		case "==":
			ok = sum == want
		default:
			return fmt.Errorf("metric operator %q", op)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("metric %s = %v, want %s %v", sel, sum, op, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func scrape(ctx context.Context, addr, name string, labels []string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		matches := true
		for _, l := range labels {
			matches = matches && strings.Contains(line, l)
		}
		if !matches {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// wireID encodes a script's printed id; a malformed one becomes a GlobalId
// of no kind, which the replica must refuse.
func wireID(s string) *computepb.GlobalId {
	id, err := plan.ParseGlobalID(s)
	if err != nil {
		return &computepb.GlobalId{}
	}
	return protocol.GlobalIDToProto(id)
}

// printID prints a wire id for matching against a script ("" when absent
// or malformed).
func printID(p *computepb.GlobalId) string {
	id, err := protocol.GlobalIDFromProto(p)
	if err != nil {
		return ""
	}
	return id.String()
}
