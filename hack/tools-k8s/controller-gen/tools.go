//go:build tools

// Package tools pins controller-gen, which generates deepcopy code and CRD YAML for hack/kube-tools.sh. Each tool is its own module so that
// their dependency graphs (which disagree on k8s.io versions) never have to be reconciled.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
