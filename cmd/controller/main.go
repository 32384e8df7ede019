// Command controller is Tandem's environment: the SQL front door, the
// catalog, table storage and the compute controller. Replicas are local
// processes started by the process orchestrator (the embedded default), or,
// with --orchestrator=kubernetes, ComputeReplica resources that the operator
// turns into pods; then the controller also reports every replica's
// hydration as its Hydrated condition, which the operator's rollouts wait
// for, and it imports ComputeReplicas users applied for its clusters into its
// catalog (adopt.go). See docs/design/kubernetes-orchestrator.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}
