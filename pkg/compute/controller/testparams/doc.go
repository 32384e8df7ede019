// Package testparams is test support: it reads the system parameters a
// test run asks for from one environment variable, so that every test that
// starts a controller with replicas can run with
// enable_compute_interactive_dataflows on (two runtimes per replica,
// one-shot reads placed OneShotRead on the interactive runtime) or off,
// without each package re-implementing the switch.
//
//	TANDEM_TEST_SYSTEM_PARAMETERS=enable_compute_interactive_dataflows=on go test ./cmd/controller/...
//
// The value has the syntax of the controller's --system-parameter-default
// flag: comma-separated name=value pairs. Unset or empty means the
// system's defaults. A malformed value fails the test that reads it rather
// than silently running with the defaults.
//
// Tests use Parameters (controller.Config.Parameters, environment
// ParamDefaults), Flag (the controller binary's --system-parameter-default)
// and Interactive (orchestrator.ReplicaConfig.Interactive). Runtimes
// scrapes a replica process's /metrics for the runtimes it runs and the
// peeks each finished, which lets a test assert that a flag-on run really
// started two runtimes and placed one-shot reads on the interactive one
// (a run that silently ignored the variable fails there).
package testparams
