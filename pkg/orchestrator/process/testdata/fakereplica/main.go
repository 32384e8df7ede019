// Command fakereplica stands in for the replica binary in orchestrator
// tests. It accepts the replica's flags, serves its pid on the computectl
// address, starts a grandchild (to test process-group kills), and behaves
// according to FAKE_* environment variables.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	ctl := flag.String("controller-listen-addr", "", "")
	_ = flag.String("internal-http-listen-addr", "", "")
	_ = flag.String("compute-listen-addr", "", "")
	_ = flag.Int("workers", 1, "")
	proc := flag.Int("process", 0, "")
	_ = flag.String("compute-peers", "", "")
	_ = flag.String("interactive-peers", "", "")
	_ = flag.String("log-level", "info", "")
	flag.Parse()

	if os.Getenv("FAKE_EXIT_IMMEDIATELY") != "" {
		fmt.Println("exiting at once")
		os.Exit(3)
	}
	if os.Getenv("FAKE_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	l, err := net.Listen("tcp", *ctl)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", *ctl)
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		fmt.Fprintf(c, "%d %d %d\n", os.Getpid(), *proc, child.Process.Pid)
		c.Close()
	}
}
