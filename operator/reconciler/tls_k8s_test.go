//go:build k8s

package reconciler

import "testing"

// TestInternalTLS runs scenarioInternalTLS against a real API server.
func TestInternalTLS(t *testing.T) { scenarioInternalTLS(t, newClient(t)) }
