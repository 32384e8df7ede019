package server

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var df1 = testDataflow{Name: "d1", Indexes: []string{"u1"}, AsOf: 5, Plan: "p1"}

// ready opens a connection, creates df1 and completes initialization.
func (h *harness) ready(nonce string, ci *computepb.CreateInstance, dfs ...testDataflow) *stream {
	h.t.Helper()
	s := h.open(nonce)
	s.send(createInstance(ci))
	h.rt.expect(h.t, "instance")
	for _, d := range dfs {
		s.send(createDataflow(d))
	}
	s.send(initDone())
	return s
}

func frontiersOf(t *testing.T, r *computepb.Response) *computepb.Frontiers {
	t.Helper()
	f := r.GetFrontiers()
	if f == nil {
		t.Fatalf("got %v, want frontiers", r)
	}
	return f
}

func commandError(t *testing.T, r *computepb.Response, code string) *computepb.CommandError {
	t.Helper()
	e := r.GetCommandError()
	if e == nil || e.GetSqlstate() != code {
		t.Fatalf("got %v, want command error %s", r, code)
	}
	return e
}

func peekError(t *testing.T, r *computepb.Response, code string) {
	t.Helper()
	e := r.GetPeekResponse().GetError()
	if e == nil || e.GetSqlstate() != code {
		t.Fatalf("got %v, want peek error %s", r, code)
	}
}

func TestFirstCommandMustBeHello(t *testing.T) {
	h := newHarness(t)
	s := h.open("")
	s.send(initDone())
	if code := status.Code(s.ended()); code != codes.FailedPrecondition {
		t.Fatalf("stream ended with %v, want FailedPrecondition", code)
	}
}

func TestCommandsBeforeCreateInstanceAreRefused(t *testing.T) {
	h := newHarness(t)
	s := h.open("n1")
	s.send(createDataflow(df1))
	commandError(t, s.recv(), CodeProtocolViolation)
	h.rt.expectNone(t)
}

func TestFrontiersNeverRegressNorGoBelowAsOf(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	at := func(t frontier.Time) *frontier.Frontier { f := frontier.At(t); return &f }
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(3)}) // below as_of 5: suppressed
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(7), Input: at(7)})
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(6)}) // regression: suppressed
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(7)}) // no advance: suppressed
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(9), Write: at(9)}) // unknown: ignored
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(8)})
	f := frontiersOf(t, s.recv())
	if f.GetWrite().GetTime() != 7 || f.GetInput().GetTime() != 7 || f.GetOutput() != nil {
		t.Fatalf("first report %v, want write=input=7", f)
	}
	// The write frontier passed the as_of: hydrated.
	if st := s.recv().GetStatus(); len(st.GetCollections()) != 1 || !st.GetCollections()[0].GetHydrated() {
		t.Fatalf("want hydration status, got %v", st)
	}
	f = frontiersOf(t, s.recv())
	if f.GetWrite().GetTime() != 8 || f.GetInput() != nil {
		t.Fatalf("second report %v, want write=8 only", f)
	}
	s.expectNone()
}

func TestBadInputIsRefusedAndServingContinues(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	until := uint64(20)
	cases := []struct {
		name string
		cmd  *computepb.Command
		code string
		peek bool
	}{
		{"unknown compaction id", allowCompaction("u404", frontier.At(3)), CodeUndefinedObject, false},
		{"unknown schedule id", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: gid("u404")}}}, CodeUndefinedObject, false},
		{"schedule without id", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{}}}, CodeProtocolViolation, false},
		{"schedule id of unknown kind", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: &computepb.GlobalId{Kind: 42, N: 1}}}}, CodeProtocolViolation, false},
		{"compaction without id", &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
			Frontier: protocol.FrontierToProto(frontier.Closed())}}}, CodeProtocolViolation, false},
		{"logging id of unknown kind", createInstance(&computepb.CreateInstance{Logging: &computepb.LoggingConfig{
			Indexes: map[string]*computepb.GlobalId{"operators": {Kind: 9, N: 1}}}}), CodeProtocolViolation, false},
		{"invalid plan", createDataflow(testDataflow{Name: "bad", Indexes: []string{"u2"}, Plan: "invalid"}), CodeInvalidPlan, false},
		{"undecodable plan", &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: &computepb.DataflowDescription{}}}}, CodeInvalidPlan, false},
		{"duplicate export", createDataflow(testDataflow{Name: "dup", Indexes: []string{"u1"}, Plan: "p"}), CodeDuplicateObject, false},
		{"duplicate export within dataflow", createDataflow(testDataflow{Name: "dup2", Indexes: []string{"u3", "u3"}, Plan: "p"}), CodeDuplicateObject, false},
		{"malformed peek", peekCmd("not-a-uuid", "u1", 5), CodeProtocolViolation, false},
		{"second hello", hello("again"), CodeProtocolViolation, false},
		{"second create instance", createInstance(&computepb.CreateInstance{}), CodeProtocolViolation, false},
		{"second init", initDone(), CodeProtocolViolation, false},
		{"empty command", &computepb.Command{}, CodeProtocolViolation, false},
		{"peek unknown index", peekCmd(uuidN(1), "u404", 5), CodeUndefinedObject, true},
		{"peek before since", peekCmd(uuidN(2), "u1", 4), CodeReadOutOfRange, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.send(tc.cmd)
			if tc.peek {
				peekError(t, s.recv(), tc.code)
			} else {
				commandError(t, s.recv(), tc.code)
			}
		})
	}
	h.rt.expectNone(t)
	// Until: a dataflow valid for [5, 20).
	s.send(createDataflow(testDataflow{Name: "d2", Indexes: []string{"u2"}, AsOf: 5, Until: &until, Plan: "p2"}))
	h.rt.expect(t, "create d2")
	s.send(peekCmd(uuidN(3), "u2", 20))
	peekError(t, s.recv(), CodeReadOutOfRange)
	// A runtime failure is an error response too.
	h.rt.fail("create d3", errorString("out of memory"))
	s.send(createDataflow(testDataflow{Name: "d3", Indexes: []string{"u3"}, Plan: "p3"}))
	h.rt.expect(t, "create d3")
	commandError(t, s.recv(), CodeInternal)
	// And everything else still works.
	s.send(peekCmd(uuidN(4), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(4))
	h.srv.Deliver(&PeekResult{UUID: uuidN(4), Rows: []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}})
	if rows := s.recv().GetPeekResponse().GetRows(); len(rows.GetRows()) != 1 {
		t.Fatalf("peek after errors: %v", rows)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestPeekExactlyOneResponse(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")

	// Answered: rows, then a late duplicate result and a late cancel are ignored.
	s.send(peekCmd(uuidN(1), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(1))
	rows := []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 2}}
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: rows})
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: rows})
	r := s.recv().GetPeekResponse()
	if r.GetUuid() != uuidN(1) || r.GetRows().GetRows()[0].GetCount() != 2 {
		t.Fatalf("got %v", r)
	}
	s.send(cancelPeek(uuidN(1)))
	s.expectNone()
	h.rt.expectNone(t)

	// Canceled: canceled once, the runtime told, its late result dropped.
	s.send(peekCmd(uuidN(2), "u1", 6), cancelPeek(uuidN(2)), cancelPeek(uuidN(2)))
	h.rt.expect(t, "peek "+uuidN(2), "cancel "+uuidN(2))
	if s.recv().GetPeekResponse().GetCanceled() == nil {
		t.Fatal("want canceled")
	}
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: rows})
	s.expectNone()

	// A duplicate pending uuid is refused without a PeekResponse.
	s.send(peekCmd(uuidN(3), "u1", 6), peekCmd(uuidN(3), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(3))
	commandError(t, s.recv(), CodeDuplicateObject)
	h.srv.Deliver(&PeekResult{UUID: uuidN(3), Err: errorString("boom")})
	peekError(t, s.recv(), CodeInternal)
	s.expectNone()
}

func TestPeekResultLimits(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{MaxResultSize: 100, PeekStashThreshold: 20, PeekStashChunkSize: 12}, df1)
	h.rt.expect(t, "create d1")
	var rows []row.RowCount
	for i := range 8 {
		rows = append(rows, row.RowCount{Row: row.Pack(row.Int64(int64(i))), Count: int64(i + 1)})
	}
	size := 0
	for _, r := range rows {
		size += len(r.Row)
	}
	if size <= 20 || size > 100 {
		t.Fatalf("test rows are %d bytes; want in (20, 100]", size)
	}

	// Above the threshold: bounded chunks, in order, ending with final.
	s.send(peekCmd(uuidN(1), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(1))
	h.srv.Deliver(&PeekResult{UUID: uuidN(1), Rows: rows})
	var got []*computepb.RowCount
	for seq := uint64(0); ; seq++ {
		st := s.recv().GetPeekResponse().GetStashed()
		if st == nil || st.GetSequence() != seq {
			t.Fatalf("chunk %d: got %v", seq, st)
		}
		chunk := 0
		for _, r := range st.GetRows() {
			chunk += len(r.GetRow())
		}
		if chunk > 12 || len(st.GetRows()) == 0 {
			t.Fatalf("chunk %d has %d bytes in %d rows; want 1+ rows within 12 bytes", seq, chunk, len(st.GetRows()))
		}
		got = append(got, st.GetRows()...)
		if st.GetFinal() {
			break
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("stash carried %d rows, want %d", len(got), len(rows))
	}
	for i, r := range got {
		if !bytes.Equal(r.GetRow(), rows[i].Row) || int64(r.GetCount()) != rows[i].Count {
			t.Fatalf("row %d: %v, want %v", i, r, rows[i])
		}
	}

	// Above the maximum: an error.
	s.send(peekCmd(uuidN(2), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(2))
	big := append(append([]row.RowCount{}, rows...), rows...)
	big = append(big, big...)
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: big})
	peekError(t, s.recv(), CodeResultTooLarge)

	// At most the threshold: one message.
	s.send(peekCmd(uuidN(3), "u1", 5))
	h.rt.expect(t, "peek "+uuidN(3))
	h.srv.Deliver(&PeekResult{UUID: uuidN(3), Rows: rows[:2]})
	if n := len(s.recv().GetPeekResponse().GetRows().GetRows()); n != 2 {
		t.Fatalf("small result: %d rows", n)
	}
	s.expectNone()
}

func TestStashCanceledMidStream(t *testing.T) {
	var rows []row.RowCount
	for i := range 100 {
		rows = append(rows, row.RowCount{Row: row.Pack(row.Int64(int64(i))), Count: 1})
	}
	job := &stashJob{uuid: uuidN(1), src: &sliceSource{rows: rows}, chunkSize: 10}
	var ended string
	job.done = func(r string) { ended = r }
	var sent []*computepb.Response
	send := func(r *computepb.Response) error {
		sent = append(sent, r)
		if len(sent) == 2 {
			job.canceled.Store(true)
		}
		return nil
	}
	for {
		_, finished, err := job.step(send)
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			break
		}
	}
	if len(sent) != 3 || sent[2].GetPeekResponse().GetCanceled() == nil || sent[1].GetPeekResponse().GetStashed().GetFinal() {
		t.Fatalf("sent %v; want two chunks then canceled", sent)
	}
	if ended != resultCanceled {
		t.Fatalf("ended %q", ended)
	}
}

func TestDropReportsClosedFrontiers(t *testing.T) {
	h := newHarness(t)
	sub := testDataflow{Name: "d2", Subscribes: []string{"u2"}, AsOf: 5, Plan: "p2"}
	s := h.ready("n1", &computepb.CreateInstance{}, df1, sub)
	h.rt.expect(t, "create d1", "create d2")
	s.send(allowCompaction("u1", frontier.At(6)))
	h.rt.expect(t, "compact u1 [6]")
	s.send(peekCmd(uuidN(1), "u1", 5)) // now before the since
	peekError(t, s.recv(), CodeReadOutOfRange)

	s.send(allowCompaction("u1", frontier.Closed()))
	h.rt.expect(t, "compact u1 []")
	f := frontiersOf(t, s.recv())
	if !f.GetWrite().GetClosed() || !f.GetInput().GetClosed() || !f.GetOutput().GetClosed() {
		t.Fatalf("drop reported %v, want closed frontiers", f)
	}
	s.send(allowCompaction("u1", frontier.Closed()))
	commandError(t, s.recv(), CodeUndefinedObject)

	h.srv.Deliver(&SubscribeBatch{ID: plan.User(2), Lower: frontier.At(5), Upper: frontier.At(7),
		Updates: []Update{{Row: row.Pack(row.Int64(1)), Time: 5, Diff: 1}}})
	sr := s.recv().GetSubscribeResponse()
	if len(sr.GetUpdates().GetUpdates()) != 1 || sr.GetUpper().GetTime() != 7 {
		t.Fatalf("subscribe batch %v", sr)
	}
	s.send(allowCompaction("u2", frontier.Closed()))
	h.rt.expect(t, "compact u2 []")
	frontiersOf(t, s.recv())
	sr = s.recv().GetSubscribeResponse()
	if sr.GetDropped() == nil || sr.GetLower().GetTime() != 7 {
		t.Fatalf("subscribe drop %v", sr)
	}
	h.srv.Deliver(&SubscribeBatch{ID: plan.User(2), Lower: frontier.At(7), Upper: frontier.At(9)})
	s.expectNone()
}

func TestReconnectReconciles(t *testing.T) {
	h := newHarness(t)
	keep := testDataflow{Name: "keep", Indexes: []string{"u1"}, AsOf: 5, Plan: "p1"}
	change := testDataflow{Name: "change", Indexes: []string{"u2"}, AsOf: 5, Plan: "p2"}
	gone := testDataflow{Name: "gone", Indexes: []string{"u3"}, AsOf: 5, Plan: "p3"}
	old := h.ready("n1", &computepb.CreateInstance{}, keep, change, gone)
	h.rt.expect(t, "create keep", "create change", "create gone")
	at := func(t frontier.Time) *frontier.Frontier { f := frontier.At(t); return &f }
	h.srv.Deliver(&FrontiersEvent{ID: plan.User(1), Write: at(9)})
	frontiersOf(t, old.recv())
	h.srv.Deliver(&HydrationEvent{ID: plan.User(1), Hydrated: true})
	if st := old.recv().GetStatus(); len(st.GetCollections()) != 1 || !st.GetCollections()[0].GetHydrated() {
		t.Fatalf("hydration status %v", st)
	}
	old.send(peekCmd(uuidN(1), "u1", 8))
	h.rt.expect(t, "peek "+uuidN(1))

	// Same nonce: a duplicate, refused.
	dup := h.open("n1")
	if code := status.Code(dup.ended()); code != codes.AlreadyExists {
		t.Fatalf("duplicate nonce ended with %v", code)
	}

	s := h.open("n2")
	if code := status.Code(old.ended()); code != codes.Aborted {
		t.Fatalf("superseded stream ended with %v, want Aborted", code)
	}
	h.rt.expect(t, "cancel "+uuidN(1)) // the old connection's peek is discarded
	s.send(createInstance(&computepb.CreateInstance{}))
	h.rt.expect(t, "instance")
	keepLater := keep
	keepLater.AsOf = 7
	changed := change
	changed.Plan = "p2-new"
	fresh := testDataflow{Name: "fresh", Indexes: []string{"u4"}, AsOf: 5, Plan: "p4"}
	s.send(createDataflow(keepLater), createDataflow(changed), createDataflow(fresh))
	h.rt.expectNone(t) // buffered until initialization completes
	h.srv.Deliver(&PeekResult{UUID: uuidN(1)})
	s.send(initDone())
	// Drops happen before builds; the kept dataflow is not rebuilt.
	var calls []string
	for range 4 {
		calls = append(calls, <-h.rt.calls)
	}
	want := map[string]bool{"compact u2 []": true, "compact u3 []": true, "create change": true, "create fresh": true}
	for i, c := range calls {
		if !want[c] {
			t.Fatalf("reconciliation call %d: %q (all: %v)", i, c, calls)
		}
	}
	if calls[3] != "create fresh" || calls[2] != "create change" {
		t.Fatalf("builds before drops: %v", calls)
	}
	h.rt.expectNone(t)
	// Every frontier afresh, then status; nothing for the old peek.
	f := frontiersOf(t, s.recv())
	if idString(f.GetId()) != "u1" || f.GetWrite().GetTime() != 9 {
		t.Fatalf("afresh report %v", f)
	}
	st := s.recv().GetStatus()
	if len(st.GetCollections()) != 1 || idString(st.GetCollections()[0].GetId()) != "u1" {
		t.Fatalf("status %v", st)
	}
	s.expectNone()
	// The kept index still serves peeks.
	s.send(peekCmd(uuidN(2), "u1", 8))
	h.rt.expect(t, "peek "+uuidN(2))
}
