package reconciler

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/rollout"
)

// Metrics are the operator's Prometheus metrics (prefix tandem_operator_). A nil *Metrics
// records nothing.
type Metrics struct {
	reconciles *prometheus.CounterVec
	rollouts   *prometheus.CounterVec
	state      *prometheus.GaugeVec
	restarts   *prometheus.CounterVec
	hydrating  *prometheus.GaugeVec

	mu sync.Mutex
	// stated lists, per namespace and cluster, the replicas that have state series, so
	// that the series of a deleted (or no longer renderable) replica are removed.
	stated map[[2]string]map[string]bool
	// restartCounts are, per namespace and replica, the container restarts last seen on
	// each of its pods (by name and UID): a pod's restarts are counted as its count grows.
	restartCounts map[[2]string]map[string]int32
}

// ReasonHydrating is the reason of the Hydrated condition the controller writes while a
// maintained dataflow of the replica has not caught up (pkg/compute/controller; the
// operator does not import it).
const ReasonHydrating = "Hydrating"

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_operator_cluster_reconciles_total",
			Help: "Cluster reconciles by result (success or error).",
		}, []string{"result"}),
		rollouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_operator_rollout_events_total",
			Help: "Rollout events by reason (RolloutStarted, RolloutCompleted, ProgressDeadlineExceeded, Creating, and the causes ImageChanged, SizeChanged, ...).",
		}, []string{"reason"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_operator_replica_rollout_state",
			Help: "1 for the rollout state each ComputeReplica is in, 0 for the others.",
		}, []string{"namespace", "replica", "cluster", "state"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_operator_replica_process_restarts_total",
			Help: "Container restarts of ComputeReplica pods (replica processes restarted in place by the kubelet) seen by the operator since it started; a pod's restarts before the operator first saw it are not counted.",
		}, []string{"namespace", "replica", "cluster"}),
		hydrating: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_operator_replica_hydrating",
			Help: "1 while the controller reports the ComputeReplica's Hydrated condition False with reason Hydrating (connected, a maintained dataflow not caught up), else 0.",
		}, []string{"namespace", "replica", "cluster"}),
		stated:        map[[2]string]map[string]bool{},
		restartCounts: map[[2]string]map[string]int32{},
	}
	for _, c := range []prometheus.Collector{m.reconciles, m.rollouts, m.state, m.restarts, m.hydrating} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register operator metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) observeReconcile(err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.reconciles.WithLabelValues(result).Inc()
}

var allStates = []rollout.State{rollout.StateMissing, rollout.StateOutdated, rollout.StateRolling,
	rollout.StateStarting, rollout.StateHydrating, rollout.StateCurrent}

func (m *Metrics) observeDecision(cr *v1alpha1.ComputeReplica, d rollout.Decision) {
	if m == nil {
		return
	}
	for _, e := range d.Events {
		m.rollouts.WithLabelValues(e.Reason).Inc()
	}
	for _, s := range allStates {
		v := 0.0
		if s == d.State {
			v = 1
		}
		m.state.WithLabelValues(cr.Namespace, cr.Name, cr.Spec.ClusterName, s.String()).Set(v)
	}
	hydrating := 0.0
	if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated); c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == ReasonHydrating {
		hydrating = 1
	}
	m.hydrating.WithLabelValues(cr.Namespace, cr.Name, cr.Spec.ClusterName).Set(hydrating)
}

// observePods counts the container restarts of a replica's pods since the last
// observation; a pod seen for the first time sets its baseline.
func (m *Metrics) observePods(cr *v1alpha1.ComputeReplica, pods []corev1.Pod) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{cr.Namespace, cr.Name}
	before := m.restartCounts[key]
	now := make(map[string]int32, len(pods))
	var grew int32
	for i := range pods {
		p := &pods[i]
		var n int32
		for _, c := range p.Status.ContainerStatuses {
			n += c.RestartCount
		}
		id := p.Name + "/" + string(p.UID)
		now[id] = n
		if old, ok := before[id]; ok && n > old {
			grew += n - old
		}
	}
	m.restartCounts[key] = now
	c := m.restarts.WithLabelValues(cr.Namespace, cr.Name, cr.Spec.ClusterName)
	if grew > 0 {
		c.Add(float64(grew))
	}
}

// observeCluster removes the state series of the cluster's replicas that a pass did not
// decide for: deleted replicas, replicas moved away, and replicas held as InvalidSpec.
func (m *Metrics) observeCluster(namespace, cluster string, decided map[string]bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{namespace, cluster}
	for name := range m.stated[key] {
		if !decided[name] {
			labels := prometheus.Labels{"namespace": namespace, "replica": name, "cluster": cluster}
			m.state.DeletePartialMatch(labels)
			m.restarts.DeletePartialMatch(labels)
			m.hydrating.DeletePartialMatch(labels)
			delete(m.restartCounts, [2]string{namespace, name})
		}
	}
	if len(decided) == 0 {
		delete(m.stated, key)
		return
	}
	m.stated[key] = decided
}
