package peeklane

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// echoEnv makes the test binary an echo peer on the unix socket it names
// (BenchmarkIdleProcessRoundTrip).
const echoEnv = "TANDEM_PEEKLANE_TEST_ECHO"

// serveEcho listens on path, accepts one connection and writes back every
// read until it closes.
func serveEcho(path string) error {
	lis, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	defer lis.Close()
	c, err := lis.Accept()
	if err != nil {
		return err
	}
	buf := make([]byte, 256)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return nil
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return nil
		}
	}
}

// BenchmarkIdleProcessRoundTrip measures the floor under every hop a read
// makes between processes on this machine: a 32-byte message to another
// process and back over a unix socket, nothing else, with the processes
// idle for gap before each message (a read at a few hundred per second
// finds them so). The p50 and p99 in microseconds are reported per gap;
// ns/op is meaningless here (it includes the gaps). On an idle virtual
// machine each wake-up of an idle process costs far more than the
// message: that difference is what a point read pays for each process it
// crosses (docs/benchmarks.md, postgres).
func BenchmarkIdleProcessRoundTrip(b *testing.B) {
	for _, gap := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
		b.Run(fmt.Sprintf("gap=%v", gap), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "echo.sock")
			peer := exec.Command(os.Args[0], "-test.run", "^$")
			peer.Env = append(os.Environ(), echoEnv+"="+path)
			if err := peer.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = peer.Process.Kill(); _ = peer.Wait() }()
			var c net.Conn
			for range 500 {
				var err error
				if c, err = net.Dial("unix", path); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if c == nil {
				b.Fatal("echo peer never listened")
			}
			defer c.Close()
			msg, buf := make([]byte, 32), make([]byte, 32)
			var rtts []time.Duration
			for b.Loop() {
				if gap > 0 {
					time.Sleep(gap)
				}
				start := time.Now()
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(msg); {
					n, err := c.Read(buf[got:])
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				rtts = append(rtts, time.Since(start))
			}
			slices.Sort(rtts)
			b.ReportMetric(float64(rtts[len(rtts)/2].Nanoseconds())/1e3, "p50-us")
			b.ReportMetric(float64(rtts[len(rtts)*99/100].Nanoseconds())/1e3, "p99-us")
		})
	}
}
