// Package e2e holds the operator's end-to-end suite against the simulated cluster of
// hack/kube-sim.sh: a real etcd, kube-apiserver, kube-controller-manager and kube-scheduler,
// with kwok playing the kubelet for a few fake nodes. Run it with `make test-k8s-sim`, which
// starts the cluster, runs the suite (build tag k8ssim) and always tears the cluster down.
//
// The suite installs charts/tandem with helm, runs the operator binary (cmd/operator) on
// the host with its ServiceAccount's token, so that the chart's RBAC is what it runs
// under, plays the controller's part (adoption label, Hydrated condition) with the
// controller's ServiceAccount token, applies the samples of config/samples, and drives
// rollouts while watching every pod event.
//
// Invariants it checks:
//   - no two replicas of a cluster are ever down at once, at any pod event, from the moment
//     the cluster first came up (availabilityTracker, which has its own unit tests and needs
//     no cluster);
//   - every replica whose pod template changes goes down exactly once, with all its pods;
//   - a paused replica is not rolled; a rollout that cannot finish turns Progressing=False
//     with reason ProgressDeadlineExceeded and holds the rest of the cluster;
//   - killing the leading operator mid-rollout hands over to the standby, which finishes it;
//   - `helm upgrade` applies a changed CRD without disturbing running replicas;
//   - a drain moves replicas one at a time, and a replica alone in its cluster waits or
//     not as spec.disruption.singleReplica says, with a condition and an event;
//   - an eviction without a cordon is refused for as long as it is retried;
//   - reads through a real controller never fail while a node is drained and an image
//     rolls, and a two-replica cluster is never left without a replica process.
//
// What is simulated: pods run no containers, so readiness comes from kwok (no probes run);
// the operator Deployment's and controller StatefulSet's pods become Ready the same way.
// For the read scenario the suite runs the real binaries on the host instead: cmd/controller
// with --orchestrator=kubernetes (hostctl_k8ssim_test.go), and one cmd/replica process per
// simulated pod, started when the pod runs and killed when it goes (hostPods). The
// controller reaches the pods by their DNS names through an HTTP CONNECT proxy (its gRPC
// client honours HTTPS_PROXY) that maps each name to its pod's process. Scheduling, the
// StatefulSet controller, garbage collection, RBAC, admission, CEL validation, server-side
// apply and the disruption controller are real.
package e2e
