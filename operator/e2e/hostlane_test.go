package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tandemdb/tandem/operator/render"
)

// lanePortArgs are the peek-lane flags of a host process standing in for pod. The pods sit
// behind the chart's NetworkPolicy, which admits the controller on the replica's named
// ports only: a pod whose container names a peek-lane port and whose replica is told to
// listen on it (--peek-lane-listen-addr, as the operator renders it) serves its lane, on
// the free loopback port addr, which it advertises with its host so that the controller on
// the host dials it directly; any other pod's lane is unreachable, as a system-chosen port
// would be behind the policy, so its process serves none and reads take the stream.
func lanePortArgs(pod *corev1.Pod, args map[string]string, addr string) []string {
	if _, fixed := args["--peek-lane-listen-addr"]; !fixed || containerPort(pod, render.PortPeekLane) == "" {
		return []string{"--peek-lane=off"}
	}
	return []string{"--peek-lane=tcp", "--peek-lane-listen-addr=" + addr}
}

// lanePeeks sums the peeks the current processes of replica received over their peek
// lanes (tandem_compute_peek_lane_commands_total{command="peek"}).
func (h *hostPods) lanePeeks(replica string) (float64, error) {
	h.mu.Lock()
	inc := h.incs[replica]
	h.mu.Unlock()
	if inc == nil {
		return 0, fmt.Errorf("replica %s runs no processes", replica)
	}
	var sum float64
	for _, p := range inc.procs {
		n, err := scrapeCounter("http://"+p.httpAddr+"/metrics", `tandem_compute_peek_lane_commands_total{command="peek"}`)
		if err != nil {
			return 0, fmt.Errorf("pod %s: %w", p.pod, err)
		}
		sum += n
	}
	return sum, nil
}

// scrapeCounter reads the value of series from a Prometheus text exposition (0 when the
// series is absent: a counter nothing incremented yet).
func scrapeCounter(url, series string) (float64, error) {
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, sc.Err()
}
