// Package tests holds the helm chart's tests (build tag k8s, run by `make test-k8s` and `make
// test-chart`): `helm lint`, golden renders of the chart for a few value sets under testdata/,
// values the schema must reject, the NetworkPolicies, alerts, dashboard and NOTES, and
// TestChartOnHost, which runs what `helm template` renders for a safe install
// (testdata/host.values.yaml) as host processes against envtest's API server and checks the
// SQL front door and the internal links. The host kubelet it uses (hostKubelet, hostNet)
// changes a rendered container only where a host process must differ from a pod: ports,
// mounted paths and the environment a pod gets from its cluster. The directory is excluded
// from the packaged chart by .helmignore.
package tests
