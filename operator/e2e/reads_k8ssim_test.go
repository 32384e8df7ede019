//go:build k8ssim

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

const (
	readsNamespace = "reads"
	readsCluster   = "reads"
	readsKeys      = 1000
	// readInterval paces the reader: 50 point reads a second.
	readInterval = 20 * time.Millisecond
	// readTimeout is how long one read may take before it counts as failed.
	readTimeout = 10 * time.Second
)

var readsReplicas = []string{"reads-a", "reads-b"}

// readsNode is the node both replicas of cluster reads prefer, so that draining it moves
// both.
const readsNode = "sim-node-0"

func preferNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 100,
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}},
		}},
	}}
}

// readsThroughDrainAndRoll runs a real controller on the host (--orchestrator=kubernetes)
// and a real replica process for each simulated pod (hostPods), in a namespace of their
// own, and reads through the controller (pgx, a point read of an index, 50 a second)
// while the simulated cluster moves the replicas' pods: two replicas of cluster "reads",
// applied by the user and adopted by the controller, then `kubectl drain` of a node
// running one of them, then a spec.image change of both. Every read must succeed; the
// reads' p50 and p99 are logged per phase.
func (st *suite) readsThroughDrainAndRoll(ctx context.Context, t *testing.T) {
	s := st.s
	stepStart := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: readsNamespace}}); err != nil {
		t.Fatal(err)
	}
	ctlBin, replicaBin := s.buildBinaries(ctx, t)
	t.Logf("built the controller and replica binaries in %s", time.Since(stepStart).Round(100*time.Millisecond))
	storage, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	hp := newHostPods(t, s.cs, readsNamespace, replicaBin, storage[0])
	if err := hp.run(ctx); err != nil {
		t.Fatal(err)
	}
	defer hp.stopAll()
	proxy := startPodProxy(t, hp.resolve)
	hc := s.startController(t, t, ctlBin, readsNamespace, storage[0], proxy.url())

	conn, err := pgx.Connect(ctx, "postgres://tandem@"+hc.pgwire+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	mustExec(ctx, t, conn, "CREATE CLUSTER "+readsCluster+" (SIZE '1', REPLICATION FACTOR 0)")
	for _, r := range readsReplicas {
		cr := &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: r, Namespace: readsNamespace},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: readsCluster, Processes: 1, Workers: 1,
				Image: "tandem/tandem:reads-v1", Scheduling: v1alpha1.Scheduling{Affinity: preferNode(readsNode)}},
		}
		if err := s.c.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(ctx, t, conn, fmt.Sprintf("CREATE SOURCE kv IN CLUSTER %s FROM LOAD GENERATOR KEY VALUE (KEYS %d)", readsCluster, readsKeys))
	mustExec(ctx, t, conn, "CREATE INDEX kv_key IN CLUSTER "+readsCluster+" ON kv (key)")
	mustExec(ctx, t, conn, "SET cluster = "+readsCluster)
	for _, r := range readsReplicas {
		s.waitReplica(ctx, t, readsNamespace, r, 2*time.Minute, servingCurrent)
	}
	eventually(ctx, t, "a first point read", time.Minute, func() error { return pointRead(ctx, conn, 1) })

	t.Logf("controller up, both replicas hydrated and read from %s after the step began", time.Since(stepStart).Round(100*time.Millisecond))
	rd := startReader(ctx, conn)
	rd.phase(t, "steady")
	waitReads(ctx, t, rd, 50)
	checkLanePeeks(t, hp, "steady")

	// Drain the node running reads-a-0 (reads' pods only; the suite's other replicas stay).
	// Both replicas prefer that node, so the drain moves both: the operator must move
	// them one at a time for reads to go on.
	before := hp.incarnations()
	node := nodeOfPod(ctx, t, s, readsNamespace, "reads-a-0")
	onNode := map[string]bool{}
	for _, r := range readsReplicas {
		onNode[r] = nodeOfPod(ctx, t, s, readsNamespace, r+"-0") == node
	}
	if !onNode["reads-b"] {
		t.Logf("note: reads-b-0 is not on %s with reads-a-0: the drain moves only reads-a", node)
	}
	rd.phase(t, "drain")
	phaseStart := time.Now()
	out, err := s.run(ctx, t, "kubectl", "drain", node,
		"--pod-selector", replicaPodSelector+","+render.LabelCluster+"="+readsCluster,
		"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "3m")
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	for _, r := range readsReplicas {
		s.waitReplica(ctx, t, readsNamespace, r, 2*time.Minute, servingCurrent)
	}
	t.Logf("drain of %s: %s until both replicas served again", node, time.Since(phaseStart).Round(100*time.Millisecond))
	waitReads(ctx, t, rd, 50)
	s.must(ctx, t, "kubectl", "uncordon", node)
	after := hp.incarnations()
	for _, r := range readsReplicas {
		want := 0
		if onNode[r] {
			want = 1
		}
		if got := after[r] - before[r]; got != want {
			t.Errorf("%s had %d new incarnations during the drain of %s, want %d", r, got, node, want)
		}
	}

	st.rollImage(ctx, t, rd, hp)
	if outs := hp.clusterOutages(); len(outs) > 0 {
		t.Errorf("both replicas of %s were down at once:\n%s", readsCluster, strings.Join(outs, "\n"))
	}
	checkLanePeeks(t, hp, "after the roll")
	rep := rd.stop()
	t.Logf("reads through the controller:\n%s", rep.text())
	if rep.failed > 0 {
		t.Errorf("%d of %d reads failed; first failures:\n%s", rep.failed, rep.total, strings.Join(rep.failures, "\n"))
	}
}

// checkLanePeeks fails t unless the replicas' current processes received point reads over
// their peek lanes: the operator gave them a named lane port the controller could dial.
func checkLanePeeks(t *testing.T, hp *hostPods, phase string) {
	t.Helper()
	var total float64
	for _, r := range readsReplicas {
		n, err := hp.lanePeeks(r)
		if err != nil {
			t.Errorf("%s: peek lane count of %s: %v", phase, r, err)
		}
		total += n
	}
	if total == 0 {
		t.Errorf("%s: no point read took a peek lane; every read took the command stream", phase)
	}
	t.Logf("%s: %.0f peeks on the replicas' peek lanes", phase, total)
}

// rollImage changes spec.image of both replicas: the operator rolls them one at a time,
// each waiting for the controller's Hydrated on its new pods.
func (st *suite) rollImage(ctx context.Context, t *testing.T, rd *reader, hp *hostPods) {
	s := st.s
	before := hp.incarnations()
	oldHash := map[string]string{}
	for _, r := range readsReplicas {
		cr, err := s.replica(ctx, readsNamespace, r)
		if err != nil {
			t.Fatal(err)
		}
		oldHash[r] = cr.Status.CurrentHash
	}
	rd.phase(t, "image roll")
	start := time.Now()
	// Both at once (back to back through the API, as one `kubectl apply` of both would),
	// so that only the operator's one-at-a-time rule keeps them apart.
	for _, r := range readsReplicas {
		cr := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Namespace: readsNamespace, Name: r}}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"tandem/tandem:reads-v2"}}`))
		if err := s.c.Patch(ctx, cr, patch); err != nil {
			t.Fatalf("patch %s: %v", r, err)
		}
	}
	for _, r := range readsReplicas {
		s.waitReplica(ctx, t, readsNamespace, r, 3*time.Minute, func(cr *v1alpha1.ComputeReplica) string {
			if cr.Status.CurrentHash == oldHash[r] {
				return "still on the old pod template " + oldHash[r]
			}
			return servingCurrent(cr)
		})
		st.expectEventIn(ctx, t, readsNamespace, r, render.ReasonImageChanged, corev1.EventTypeNormal)
	}
	t.Logf("image roll: %s until both replicas served the new template", time.Since(start).Round(100*time.Millisecond))
	waitReads(ctx, t, rd, 50)
	after := hp.incarnations()
	for _, r := range readsReplicas {
		if after[r] != before[r]+1 {
			t.Errorf("%s had %d new incarnations during the image roll, want 1", r, after[r]-before[r])
		}
	}
}

// servingCurrent is "" when the replica runs its current spec and the controller reports
// it Hydrated for that generation.
func servingCurrent(cr *v1alpha1.ComputeReplica) string {
	if msg := rolledOut(cr); msg != "" {
		return msg
	}
	c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != cr.Generation {
		return "not Hydrated for generation " + fmt.Sprint(cr.Generation) + ": " + conditionsText(cr)
	}
	return ""
}

func nodeOfPod(ctx context.Context, t *testing.T, s *sim, namespace, pod string) string {
	t.Helper()
	var p corev1.Pod
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: pod}, &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName == "" {
		t.Fatalf("pod %s/%s is not scheduled", namespace, pod)
	}
	return p.Spec.NodeName
}

func mustExec(ctx context.Context, t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pointRead reads one key of the index and checks the answer.
func pointRead(ctx context.Context, conn *pgx.Conn, key int64) error {
	rows, err := conn.Query(ctx, "SELECT key FROM kv WHERE key = $1", key)
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	if len(got) == 0 || slices.ContainsFunc(got, func(k int64) bool { return k != key }) {
		return fmt.Errorf("key %d: got %v", key, got)
	}
	return nil
}

// waitReads waits until the reader has done n more reads in its current phase.
func waitReads(ctx context.Context, t *testing.T, rd *reader, n int) {
	t.Helper()
	eventually(ctx, t, fmt.Sprintf("%d reads in phase %s", n, rd.current()), time.Minute, func() error {
		if got := rd.count(); got < n {
			return fmt.Errorf("%d reads", got)
		}
		return nil
	})
}

// reader reads one key after another through one connection, one read every readInterval
// (a read that takes longer delays the next), and records each read's latency in the
// phase it started in.
type reader struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	phases []*phaseReads
}

type phaseReads struct {
	name     string
	lat      []time.Duration
	failures []string
}

func startReader(ctx context.Context, conn *pgx.Conn) *reader {
	ctx, cancel := context.WithCancel(ctx)
	rd := &reader{cancel: cancel, done: make(chan struct{}), phases: []*phaseReads{{name: "start"}}}
	go func() {
		defer close(rd.done)
		tick := time.NewTicker(readInterval)
		defer tick.Stop()
		for i := int64(0); ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, readTimeout)
			start := time.Now()
			err := pointRead(rctx, conn, i%readsKeys)
			lat := time.Since(start)
			rcancel()
			if ctx.Err() != nil {
				return // the read was cut short by the end of the test, not by the cluster
			}
			rd.record(lat, err)
		}
	}()
	return rd
}

func (rd *reader) record(lat time.Duration, err error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	p := rd.phases[len(rd.phases)-1]
	p.lat = append(p.lat, lat)
	if err != nil {
		p.failures = append(p.failures, fmt.Sprintf("%s: %s: %v", time.Now().Format(time.StampMilli), p.name, err))
	}
}

// phase starts a new phase of the record.
func (rd *reader) phase(t *testing.T, name string) {
	t.Logf("reads: phase %s", name)
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.phases = append(rd.phases, &phaseReads{name: name})
}

func (rd *reader) current() string {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.phases[len(rd.phases)-1].name
}

// count is the number of reads done in the current phase.
func (rd *reader) count() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return len(rd.phases[len(rd.phases)-1].lat)
}

type readReport struct {
	total, failed int
	failures      []string
	lines         []string
}

func (r readReport) text() string { return strings.Join(r.lines, "\n") }

// stop ends the reader and summarises every phase and the whole run.
func (rd *reader) stop() readReport {
	rd.cancel()
	<-rd.done
	rd.mu.Lock()
	defer rd.mu.Unlock()
	var rep readReport
	var all []time.Duration
	for _, p := range rd.phases {
		if len(p.lat) == 0 {
			continue
		}
		rep.lines = append(rep.lines, summary(p.name, p.lat, len(p.failures)))
		rep.total += len(p.lat)
		rep.failed += len(p.failures)
		rep.failures = append(rep.failures, p.failures...)
		all = append(all, p.lat...)
	}
	rep.lines = append(rep.lines, summary("all", all, rep.failed))
	if len(rep.failures) > 10 {
		rep.failures = rep.failures[:10]
	}
	return rep
}

func summary(name string, lat []time.Duration, failed int) string {
	s := slices.Clone(lat)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("  %-10s reads %5d  failed %d  p50 %v  p99 %v  max %v", name, len(s), failed,
		q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), s[len(s)-1].Round(10*time.Microsecond))
}
