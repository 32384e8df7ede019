package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// fakeOrchestrator reports fixed addresses "name/process" for replicas.
type fakeOrchestrator struct {
	mu       sync.Mutex
	replicas map[orchestrator.ReplicaID]orchestrator.ReplicaConfig
	// onEnsure, when set, runs on every EnsureReplica (outside the lock).
	onEnsure func(orchestrator.ReplicaConfig)
}

func newFakeOrchestrator() *fakeOrchestrator {
	return &fakeOrchestrator{replicas: map[orchestrator.ReplicaID]orchestrator.ReplicaConfig{}}
}

func (o *fakeOrchestrator) EnsureReplica(_ context.Context, cfg orchestrator.ReplicaConfig) error {
	o.mu.Lock()
	o.replicas[cfg.ID] = cfg
	hook := o.onEnsure
	o.mu.Unlock()
	if hook != nil {
		hook(cfg)
	}
	return nil
}

func (o *fakeOrchestrator) RemoveReplica(_ context.Context, id orchestrator.ReplicaID) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.replicas, id)
	return nil
}

func (o *fakeOrchestrator) ListReplicas(context.Context) ([]orchestrator.ReplicaID, error) {
	return nil, nil
}

func (o *fakeOrchestrator) Status(_ context.Context, id orchestrator.ReplicaID) (orchestrator.ReplicaStatus, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cfg, ok := o.replicas[id]
	if !ok {
		return orchestrator.ReplicaStatus{}, orchestrator.ErrNotFound
	}
	st := orchestrator.ReplicaStatus{Config: cfg}
	for i := range cfg.Processes {
		st.Processes = append(st.Processes, orchestrator.ProcessStatus{Index: i, State: orchestrator.ProcessRunning,
			ComputeCtlAddr: fmt.Sprintf("%s/%d", id.Replica, i)})
	}
	return st, nil
}

// fakeDataflow is what the fake replica reads of the test encoder's
// description.
type fakeDataflow struct {
	ID      string
	AsOf    uint64
	Class   int32
	Exports []string
}

// fakeDataflowOf reads a description sent by testDataflow's encoder.
func fakeDataflowOf(d *computepb.DataflowDescription) fakeDataflow {
	id, _ := protocol.GlobalIDFromProto(d.GetId())
	df := fakeDataflow{ID: id.String(), AsOf: d.GetAsOf().GetTime(), Class: int32(d.GetClass())}
	for _, e := range d.GetIndexExports() {
		eid, _ := protocol.GlobalIDFromProto(e.GetId())
		df.Exports = append(df.Exports, eid.String())
	}
	return df
}

// gid is the id a test names by its printed form ("u1"); a malformed one
// is a bug in the test.
func gid(s string) plan.GlobalID {
	id, err := plan.ParseGlobalID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// gids is gid of each of ss (nil for none).
func gids(ss ...string) []plan.GlobalID {
	var out []plan.GlobalID
	for _, s := range ss {
		out = append(out, gid(s))
	}
	return out
}

// testDataflow returns a Dataflow over imports with one index export.
func testDataflow(id string, indexImports, sourceImports []string) Dataflow {
	return Dataflow{
		ID: gid(id), IndexImports: gids(indexImports...), SourceImports: gids(sourceImports...), IndexExports: gids(id),
		Encode: func(asOf frontier.Time, class computepb.DataflowClass) (*computepb.DataflowDescription, error) {
			pid := protocol.GlobalIDToProto(gid(id))
			return &computepb.DataflowDescription{Id: pid, AsOf: protocol.FrontierToProto(frontier.At(asOf)), Class: class,
				IndexExports: []*computepb.IndexExport{{Id: pid, On: pid}}}, nil
		},
	}
}

// fakeProcess is one replica process: it records commands and answers as
// its replica's script says.
type fakeProcess struct {
	replica *fakeReplica
	index   int
	resp    chan *computepb.Response
	closed  chan struct{}
	once    sync.Once
}

func (p *fakeProcess) Send(cmd *computepb.Command) error {
	select {
	case <-p.closed:
		return io.EOF
	default:
	}
	if err := protocol.Validate(cmd); err != nil {
		return err
	}
	p.replica.handle(p, cmd)
	return nil
}

func (p *fakeProcess) Recv() (*computepb.Response, error) {
	select {
	case r := <-p.resp:
		return r, nil
	case <-p.closed:
		return nil, io.EOF
	}
}

func (p *fakeProcess) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *fakeProcess) send(r *computepb.Response) {
	select {
	case p.resp <- r:
	case <-p.closed:
	}
}

// fakeReplica scripts one replica's behaviour.
type fakeReplica struct {
	mu    sync.Mutex
	procs map[int]*fakeProcess
	// commands received by process 0, in order.
	log []*computepb.Command
	// dataflows known (from CreateDataflow), by export.
	dataflows map[string]fakeDataflow
	// rows answers peeks per target and process; absent means the peek
	// stays pending until answered by hand.
	rows map[string][][]*computepb.RowCount
	// peekErr answers peeks with an error when set.
	peekErr *computepb.PeekError
	pending map[string]*computepb.Peek
	// maxPending is the most peeks ever pending at once.
	maxPending int
	// autoReport reports frontiers write=output=as_of+1 on CreateDataflow.
	autoReport bool
	// stashChunk, when positive, answers peeks from rows as stashed chunks
	// of this many rows; stashStall then sends only the first chunk and
	// leaves the peek pending.
	stashChunk int
	stashStall bool
	// silentDrops leaves AllowCompaction to the empty frontier unanswered,
	// as a replica stuck in a long step (and then killed) would.
	silentDrops bool
	// refuse, when set, refuses every CreateDataflow with this error as
	// a real replica refuses an invalid plan: a CommandError naming the
	// dataflow, then "unknown collection" for its Schedule and "unknown
	// index" (42704) for every peek of its exports, in stream order.
	// deferRefusal holds each process's CommandError back until the
	// process receives a peek of an export, then sends it and leaves the
	// peek pending (so that only the refusal can end the peek).
	refuse       *computepb.PeekError
	deferRefusal bool
	refused      map[string]bool               // exports of refused dataflows
	deferred     map[int][]*computepb.Response // per process
	// memoryNear is the near_limit each process reports on Hello, as a
	// real process reports its memory on every connection;
	// memorySilent sends no report.
	memoryNear, memorySilent bool
}

func newFakeReplica() *fakeReplica {
	return &fakeReplica{procs: map[int]*fakeProcess{}, dataflows: map[string]fakeDataflow{},
		rows: map[string][][]*computepb.RowCount{}, pending: map[string]*computepb.Peek{},
		refused: map[string]bool{}, deferred: map[int][]*computepb.Response{}}
}

func (f *fakeReplica) handle(p *fakeProcess, cmd *computepb.Command) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.index == 0 {
		f.log = append(f.log, cmd)
	}
	switch k := cmd.GetKind().(type) {
	case *computepb.Command_Hello:
		if !f.memorySilent {
			p.send(memoryStatusResp(f.memoryNear))
		}
	case *computepb.Command_CreateDataflow:
		df := fakeDataflowOf(k.CreateDataflow.GetDataflow())
		if f.refuse != nil {
			f.refuseLocked(p, df)
			return
		}
		for _, e := range df.Exports {
			f.dataflows[e] = df
		}
		if f.autoReport {
			for _, e := range df.Exports {
				go p.send(frontiersResp(e, frontier.At(frontier.Time(df.AsOf+1))))
			}
		}
	case *computepb.Command_AllowCompaction:
		if k.AllowCompaction.GetFrontier().GetClosed() && !f.silentDrops {
			go p.send(frontiersResp(printed(k.AllowCompaction.GetId()), frontier.Closed()))
		}
	case *computepb.Command_Schedule:
		if id := printed(k.Schedule.GetId()); f.refused[id] {
			p.send(commandErrorResp(protocol.KindSchedule, id, "42704", "unknown collection "+id))
		}
	case *computepb.Command_Peek:
		pk := k.Peek
		switch {
		case f.refused[peekTarget(pk)] && len(f.deferred[p.index]) > 0:
			// The refusal arrives while the peek is pending.
			for _, r := range f.deferred[p.index] {
				p.send(r)
			}
			delete(f.deferred, p.index)
			f.pending[pk.GetUuid()] = pk
		case f.refused[peekTarget(pk)]:
			p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
				Uuid: pk.GetUuid(), Result: &computepb.PeekResponse_Error{Error: &computepb.PeekError{
					Sqlstate: "42704", Message: "unknown index " + peekTarget(pk)}}}}})
		case f.peekErr != nil:
			go p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
				Uuid: pk.GetUuid(), Result: &computepb.PeekResponse_Error{Error: f.peekErr}}}})
		case f.rows[peekTarget(pk)] != nil && f.stashChunk > 0:
			rows, n, stall := f.rows[peekTarget(pk)][p.index], f.stashChunk, f.stashStall
			if stall {
				f.pending[pk.GetUuid()] = pk
			}
			go func() {
				for seq := 0; ; seq++ {
					chunk := rows[min(seq*n, len(rows)):min((seq+1)*n, len(rows))]
					final := (seq+1)*n >= len(rows)
					p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
						Uuid: pk.GetUuid(), Result: &computepb.PeekResponse_Stashed{Stashed: &computepb.StashedChunk{
							Sequence: uint64(seq), Rows: chunk, Final: final && !stall}}}}})
					if final || stall {
						return
					}
				}
			}()
		case f.rows[peekTarget(pk)] != nil:
			rows := f.rows[peekTarget(pk)][p.index]
			go p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
				Uuid: pk.GetUuid(), Result: &computepb.PeekResponse_Rows{Rows: &computepb.PeekRows{Rows: rows}}}}})
		default:
			f.pending[pk.GetUuid()] = pk
			f.maxPending = max(f.maxPending, len(f.pending))
		}
	case *computepb.Command_CancelPeek:
		if _, ok := f.pending[k.CancelPeek.GetUuid()]; ok {
			delete(f.pending, k.CancelPeek.GetUuid())
			go p.send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
				Uuid: k.CancelPeek.GetUuid(), Result: &computepb.PeekResponse_Canceled{Canceled: &computepb.PeekCanceled{}}}}})
		}
	}
}

// refuseLocked refuses df on process p (see fakeReplica.refuse); the
// responses are sent in order, as the real replica's are.
func (f *fakeReplica) refuseLocked(p *fakeProcess, df fakeDataflow) {
	for _, e := range df.Exports {
		f.refused[e] = true
	}
	r := commandErrorResp(protocol.KindCreateDataflow, df.ID, f.refuse.GetSqlstate(), f.refuse.GetMessage())
	if f.deferRefusal {
		f.deferred[p.index] = append(f.deferred[p.index], r)
		return
	}
	p.send(r)
}

func commandErrorResp(command, id, code, msg string) *computepb.Response {
	return &computepb.Response{Kind: &computepb.Response_CommandError{CommandError: &computepb.CommandError{
		Command: command, Collection: wireOf(id), Sqlstate: code, Message: msg}}}
}

// wireOf is the wire form of a fake replica's printed id; nil (absent)
// when it does not parse, as a broken replica might send.
func wireOf(id string) *computepb.GlobalId {
	gid, err := plan.ParseGlobalID(id)
	if err != nil {
		return nil
	}
	return protocol.GlobalIDToProto(gid)
}

func frontiersResp(id string, f frontier.Frontier) *computepb.Response {
	pf := protocol.FrontierToProto(f)
	return &computepb.Response{Kind: &computepb.Response_Frontiers{Frontiers: &computepb.Frontiers{Id: wireOf(id), Write: pf, Input: pf, Output: pf}}}
}

// report sends frontiers from every connected process.
func (f *fakeReplica) report(id string, fr frontier.Frontier) {
	f.mu.Lock()
	procs := make([]*fakeProcess, 0, len(f.procs))
	for _, p := range f.procs {
		procs = append(procs, p)
	}
	f.mu.Unlock()
	for _, p := range procs {
		p.send(frontiersResp(id, fr))
	}
}

// reportFrom sends frontiers from one process.
func (f *fakeReplica) reportFrom(proc int, id string, fr frontier.Frontier) {
	f.mu.Lock()
	p := f.procs[proc]
	f.mu.Unlock()
	p.send(frontiersResp(id, fr))
}

// disconnect drops every connection (as a crash would).
func (f *fakeReplica) disconnect() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		p.Close()
	}
	f.procs = map[int]*fakeProcess{}
	f.pending = map[string]*computepb.Peek{}
}

func (f *fakeReplica) commandKinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.log {
		out = append(out, protocol.CommandKind(c))
	}
	return out
}

func (f *fakeReplica) commands() []*computepb.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func (f *fakeReplica) connected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.procs)
}

func (f *fakeReplica) pendingPeeks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// fakeDialer connects addresses "replica/process" to fake replicas.
type fakeDialer struct {
	mu       sync.Mutex
	replicas map[string]*fakeReplica
}

func (d *fakeDialer) Dial(_ context.Context, addr string) (Stream, error) {
	var name string
	var idx int
	if _, err := fmt.Sscanf(addr, "%s", &name); err != nil {
		return nil, err
	}
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == '/' {
			name = addr[:i]
			fmt.Sscanf(addr[i+1:], "%d", &idx)
			break
		}
	}
	d.mu.Lock()
	f, ok := d.replicas[name]
	d.mu.Unlock()
	if !ok {
		return nil, errors.New("connection refused")
	}
	p := &fakeProcess{replica: f, index: idx, resp: make(chan *computepb.Response, 1024), closed: make(chan struct{})}
	f.mu.Lock()
	f.procs[idx] = p
	f.mu.Unlock()
	return p, nil
}

// harness is a controller with fake replicas.
type harness struct {
	t      *testing.T
	c      *Controller
	dialer *fakeDialer
	orch   *fakeOrchestrator
	oracle *fixedOracle
}

type fixedOracle struct {
	mu sync.Mutex
	t  frontier.Time
}

func (o *fixedOracle) ReadTS() frontier.Time { o.mu.Lock(); defer o.mu.Unlock(); return o.t }

// ApplyRead leaves the fixed time alone: tests set it by hand.
func (o *fixedOracle) ApplyRead(frontier.Time) {}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, nil) }

// newHarnessWith is newHarness with the config changed by edit first.
func newHarnessWith(t *testing.T, edit func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, dialer: &fakeDialer{replicas: map[string]*fakeReplica{}}, orch: newFakeOrchestrator(), oracle: &fixedOracle{t: 1000}}
	cfg := Config{
		Log: testr.New(t), Orchestrator: h.orch, Dialer: h.dialer, Oracle: h.oracle,
		ReadPolicyLag: 10 * time.Millisecond, MinReconnectBackoff: 5 * time.Millisecond, MaxReconnectBackoff: 20 * time.Millisecond,
		Parameters: testparams.Parameters(t),
	}
	if edit != nil {
		edit(&cfg)
	}
	h.c = New(cfg)
	t.Cleanup(h.c.Close)
	if err := h.c.CreateCluster("default"); err != nil {
		t.Fatal(err)
	}
	return h
}

// addReplica creates a fake replica with n processes and waits until it is
// connected.
func (h *harness) addReplica(name string, processes int) *fakeReplica {
	h.t.Helper()
	f := h.startReplica(name, processes, nil)
	h.eventually(fmt.Sprintf("replica %s connected", name), func() bool { return h.connected(name) })
	return f
}

// startReplica creates a fake replica with n processes, scripted by edit
// when not nil, without waiting for it to connect.
func (h *harness) startReplica(name string, processes int, edit func(*fakeReplica)) *fakeReplica {
	h.t.Helper()
	f := newFakeReplica()
	if edit != nil {
		edit(f)
	}
	h.dialer.mu.Lock()
	h.dialer.replicas[name] = f
	h.dialer.mu.Unlock()
	if err := h.c.CreateReplica(context.Background(), orchestrator.ReplicaConfig{
		ID: orchestrator.ReplicaID{Cluster: "default", Replica: name}, Processes: processes, Workers: 1,
		Interactive: testparams.Interactive(h.t)}); err != nil {
		h.t.Fatal(err)
	}
	return f
}

func (h *harness) connected(name string) bool {
	for _, cl := range h.c.Status().Clusters {
		for _, r := range cl.Replicas {
			if r.Name == name {
				return r.Connected
			}
		}
	}
	return false
}

func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	// Generous: only a failing test waits this long, and a loaded machine
	// can delay the controller's goroutines by seconds.
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// collection returns a collection's status.
func (h *harness) collection(id string) (CollectionStatus, bool) {
	for _, cs := range h.c.Status().Collections {
		if cs.ID.String() == id {
			return cs, true
		}
	}
	return CollectionStatus{}, false
}

// peekTarget prints a peek's target id.
func peekTarget(p *computepb.Peek) string {
	id, _ := protocol.GlobalIDFromProto(p.GetTarget())
	return id.String()
}

// printed is a wire id's printed form ("" when absent or malformed).
func printed(p *computepb.GlobalId) string {
	id, err := protocol.GlobalIDFromProto(p)
	if err != nil {
		return ""
	}
	return id.String()
}
