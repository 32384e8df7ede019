//go:build tools

// Package tools pins the Kubernetes control-plane binaries that hack/kube-tools.sh builds
// for the envtest suites and the simulated cluster. It is a separate module so that the
// main module does not inherit k8s.io/kubernetes and its dependency graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
