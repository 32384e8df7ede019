//go:build tools

// Package tools pins helm, for the chart's lint and install tests for hack/kube-tools.sh. Each tool is its own module so that
// their dependency graphs (which disagree on k8s.io versions) never have to be reconciled.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
