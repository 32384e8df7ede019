package reconciler

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/rollout"
)

// Metrics are the operator's Prometheus metrics (prefix tandem_operator_). A nil *Metrics
// records nothing.
type Metrics struct {
	reconciles *prometheus.CounterVec
	rollouts   *prometheus.CounterVec
	state      *prometheus.GaugeVec

	mu sync.Mutex
	// stated lists, per namespace and cluster, the replicas that have state series, so
	// that the series of a deleted (or no longer renderable) replica are removed.
	stated map[[2]string]map[string]bool
}

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
		stated: map[[2]string]map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.reconciles, m.rollouts, m.state} {
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
			m.state.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "replica": name, "cluster": cluster})
		}
	}
	if len(decided) == 0 {
		delete(m.stated, key)
		return
	}
	m.stated[key] = decided
}
