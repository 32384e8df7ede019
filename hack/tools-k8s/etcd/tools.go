//go:build tools

// Package tools pins etcd, the API server's storage for hack/kube-tools.sh. Each tool is its own module so that
// their dependency graphs (which disagree on k8s.io versions) never have to be reconciled.
package tools

import _ "go.etcd.io/etcd/server/v3"
