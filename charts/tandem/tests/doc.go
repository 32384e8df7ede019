// Package tests holds the helm chart's tests (build tag k8s, run by `make test-k8s`): `helm
// lint`, golden renders of the chart for a few value sets under testdata/, and values the
// schema must reject. The directory is excluded from the packaged chart by .helmignore.
package tests
