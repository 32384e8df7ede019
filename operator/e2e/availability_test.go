package e2e

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tandemdb/tandem/operator/render"
)

// availabilityTracker follows the pods of ComputeReplicas through a stream of pod events
// (in the order the API server serialised them) and records, per cluster, how many replicas
// were down at once. A replica is up when each of its processes 0..n-1 has a pod that is
// Ready and not terminating; its processes share fate, so one missing process is the whole
// replica down. Counting starts at arm, when every known replica must be up.
type availabilityTracker struct {
	mu       sync.Mutex
	replicas map[string]replicaShape // by replica name
	pods     map[string]trackedPod   // by pod name
	down     map[string]bool         // by replica name
	armed    bool
	maxDown  map[string]int // by cluster, since arm
	outages  map[string]int // by replica, since arm
	// violations describe every event after which two replicas of a cluster were down,
	// or a replica came up with pods of different templates.
	violations []string
	timeline   []string
	start      time.Time
}

type replicaShape struct {
	cluster   string
	processes int
}

type trackedPod struct {
	replica     string
	ordinal     int
	ready       bool
	terminating bool
	hash        string
}

func newAvailabilityTracker() *availabilityTracker {
	return &availabilityTracker{
		replicas: map[string]replicaShape{},
		pods:     map[string]trackedPod{},
		down:     map[string]bool{},
		maxDown:  map[string]int{},
		outages:  map[string]int{},
		start:    time.Now(),
	}
}

// setShape registers a replica (or changes its process count).
func (a *availabilityTracker) setShape(replica, cluster string, processes int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replicas[replica] = replicaShape{cluster: cluster, processes: processes}
	a.down[replica] = !a.upLocked(replica)
}

// observe applies one pod event.
func (a *availabilityTracker) observe(typ watch.EventType, pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	replica := pod.Labels[render.LabelReplica]
	if replica == "" {
		return
	}
	switch typ {
	case watch.Deleted:
		delete(a.pods, pod.Name)
	case watch.Added, watch.Modified:
		ordinal, err := strconv.Atoi(strings.TrimPrefix(pod.Name, replica+"-"))
		if err != nil || !strings.HasPrefix(pod.Name, replica+"-") {
			return // not a StatefulSet pod of the replica
		}
		a.pods[pod.Name] = trackedPod{
			replica:     replica,
			ordinal:     ordinal,
			ready:       podReady(pod),
			terminating: pod.DeletionTimestamp != nil,
			hash:        pod.Labels[render.LabelPodTemplateHash],
		}
	default:
		return
	}
	if _, ok := a.replicas[replica]; !ok {
		return
	}
	wasDown, isDown := a.down[replica], !a.upLocked(replica)
	if wasDown == isDown {
		return
	}
	a.down[replica] = isDown
	shape := a.replicas[replica]
	at := time.Since(a.start).Round(time.Millisecond)
	if isDown {
		a.timeline = append(a.timeline, fmt.Sprintf("%s %s down (pod %s %s)", at, replica, pod.Name, typ))
	} else {
		a.timeline = append(a.timeline, fmt.Sprintf("%s %s up", at, replica))
	}
	if !a.armed {
		return
	}
	if isDown {
		a.outages[replica]++
		downNow := a.downInClusterLocked(shape.cluster)
		a.maxDown[shape.cluster] = max(a.maxDown[shape.cluster], len(downNow))
		if len(downNow) > 1 {
			a.violations = append(a.violations, fmt.Sprintf("at %s cluster %s had %d replicas down: %s",
				at, shape.cluster, len(downNow), strings.Join(downNow, ", ")))
		}
	} else if hashes := a.hashesLocked(replica); len(hashes) > 1 {
		a.violations = append(a.violations, fmt.Sprintf("at %s replica %s came up with pods of templates %v",
			at, replica, hashes))
	}
}

// arm starts counting; it fails unless every registered replica is up.
func (a *availabilityTracker) arm() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var down []string
	for r := range a.replicas {
		if a.down[r] {
			down = append(down, r)
		}
	}
	if len(down) > 0 {
		sort.Strings(down)
		return fmt.Errorf("replicas down when arming: %s", strings.Join(down, ", "))
	}
	a.armed = true
	return nil
}

// availabilityReport is what the tracker saw since arm.
type availabilityReport struct {
	MaxDown    map[string]int
	Outages    map[string]int
	Violations []string
	Down       []string
}

func (a *availabilityTracker) report() availabilityReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := availabilityReport{MaxDown: map[string]int{}, Outages: map[string]int{},
		Violations: append([]string(nil), a.violations...)}
	for k, v := range a.maxDown {
		r.MaxDown[k] = v
	}
	for k, v := range a.outages {
		r.Outages[k] = v
	}
	for k, d := range a.down {
		if d {
			r.Down = append(r.Down, k)
		}
	}
	sort.Strings(r.Down)
	return r
}

// hashes returns the distinct pod-template hashes of a replica's live pods.
func (a *availabilityTracker) hashes(replica string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hashesLocked(replica)
}

func (a *availabilityTracker) timelineText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.timeline, "\n")
}

func (a *availabilityTracker) upLocked(replica string) bool {
	shape := a.replicas[replica]
	for i := 0; i < shape.processes; i++ {
		p, ok := a.pods[fmt.Sprintf("%s-%d", replica, i)]
		if !ok || !p.ready || p.terminating {
			return false
		}
	}
	return shape.processes > 0
}

func (a *availabilityTracker) downInClusterLocked(cluster string) []string {
	var down []string
	for r, shape := range a.replicas {
		if shape.cluster == cluster && a.down[r] {
			down = append(down, r)
		}
	}
	sort.Strings(down)
	return down
}

func (a *availabilityTracker) hashesLocked(replica string) []string {
	set := map[string]bool{}
	for _, p := range a.pods {
		if p.replica == replica && !p.terminating {
			set[p.hash] = true
		}
	}
	var hs []string
	for h := range set {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	return hs
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// The tracker is the suite's judge of "never two replicas down", so it is tested on its
// own with hand-written event streams.

func testPod(replica string, ordinal int, hash string, ready, terminating bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:   fmt.Sprintf("%s-%d", replica, ordinal),
		Labels: map[string]string{render.LabelReplica: replica, render.LabelPodTemplateHash: hash},
	}}
	if terminating {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

type podEvent struct {
	typ watch.EventType
	pod *corev1.Pod
}

// upEvents brings both processes of a replica up with a template.
func upEvents(replica, hash string) []podEvent {
	return []podEvent{
		{watch.Added, testPod(replica, 0, hash, true, false)},
		{watch.Added, testPod(replica, 1, hash, true, false)},
	}
}

// rollEvents takes a replica's two processes down together and back up with a template.
func rollEvents(replica, oldHash, newHash string) []podEvent {
	return []podEvent{
		{watch.Modified, testPod(replica, 0, oldHash, true, true)},
		{watch.Modified, testPod(replica, 1, oldHash, true, true)},
		{watch.Deleted, testPod(replica, 0, oldHash, true, true)},
		{watch.Deleted, testPod(replica, 1, oldHash, true, true)},
		{watch.Added, testPod(replica, 0, newHash, false, false)},
		{watch.Added, testPod(replica, 1, newHash, false, false)},
		{watch.Modified, testPod(replica, 0, newHash, true, false)},
		{watch.Modified, testPod(replica, 1, newHash, true, false)},
	}
}

func TestAvailabilityTracker(t *testing.T) {
	concat := func(parts ...[]podEvent) []podEvent {
		var all []podEvent
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name           string
		events         []podEvent
		wantMaxDown    int
		wantOutages    map[string]int
		wantViolations int
		wantDown       []string
	}{
		{
			name:        "one at a time",
			events:      concat(rollEvents("r1", "a", "b"), rollEvents("r2", "a", "b"), rollEvents("r3", "a", "b")),
			wantMaxDown: 1, wantOutages: map[string]int{"r1": 1, "r2": 1, "r3": 1},
		},
		{
			name: "two down together",
			events: concat(
				[]podEvent{{watch.Modified, testPod("r1", 0, "a", true, true)}},
				[]podEvent{{watch.Modified, testPod("r2", 1, "a", false, false)}},
			),
			wantMaxDown: 2, wantOutages: map[string]int{"r1": 1, "r2": 1}, wantViolations: 1, wantDown: []string{"r1", "r2"},
		},
		{
			name: "a not-ready process is the replica down",
			events: []podEvent{
				{watch.Modified, testPod("r3", 1, "a", false, false)},
				{watch.Modified, testPod("r3", 1, "a", true, false)},
			},
			wantMaxDown: 1, wantOutages: map[string]int{"r3": 1},
		},
		{
			name: "coming up with mixed templates",
			events: []podEvent{
				{watch.Modified, testPod("r1", 0, "a", true, true)},
				{watch.Deleted, testPod("r1", 0, "a", true, true)},
				{watch.Added, testPod("r1", 0, "b", true, false)},
			},
			wantMaxDown: 1, wantOutages: map[string]int{"r1": 1}, wantViolations: 1,
		},
		{
			name: "pods of unknown replicas and other names are ignored",
			events: []podEvent{
				{watch.Modified, testPod("other", 0, "a", false, false)},
				{watch.Added, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r1-debug", Labels: map[string]string{render.LabelReplica: "r1"}}}},
			},
			wantOutages: map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAvailabilityTracker()
			for _, r := range []string{"r1", "r2", "r3"} {
				a.setShape(r, "prod", 2)
				for _, e := range upEvents(r, "a") {
					a.observe(e.typ, e.pod)
				}
			}
			if err := a.arm(); err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.events {
				a.observe(e.typ, e.pod)
			}
			got := a.report()
			if got.MaxDown["prod"] != tt.wantMaxDown {
				t.Errorf("max down = %d, want %d\n%s", got.MaxDown["prod"], tt.wantMaxDown, a.timelineText())
			}
			if fmt.Sprint(got.Outages) != fmt.Sprint(tt.wantOutages) {
				t.Errorf("outages = %v, want %v", got.Outages, tt.wantOutages)
			}
			if len(got.Violations) != tt.wantViolations {
				t.Errorf("violations = %q, want %d", got.Violations, tt.wantViolations)
			}
			if fmt.Sprint(got.Down) != fmt.Sprint(tt.wantDown) {
				t.Errorf("down = %v, want %v", got.Down, tt.wantDown)
			}
		})
	}
}

func TestAvailabilityTrackerArmRequiresAllUp(t *testing.T) {
	a := newAvailabilityTracker()
	a.setShape("r1", "prod", 2)
	a.observe(watch.Added, testPod("r1", 0, "a", true, false))
	if err := a.arm(); err == nil {
		t.Fatal("arm succeeded with r1-1 missing")
	}
	a.observe(watch.Added, testPod("r1", 1, "a", true, false))
	if err := a.arm(); err != nil {
		t.Fatal(err)
	}
}
