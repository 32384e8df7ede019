//go:build k8s

package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// hostKubelet runs a pod's one container as a process on the host, the way a kubelet would
// run it, with these differences, and no others:
//   - every port the pod's containers declare is a free loopback address (hostNet), so an
//     argument that is an address is rewritten: ":port" to the pod's loopback address for
//     that port and, for a process that dials cluster names from its arguments, "name:port"
//     to the loopback address cluster DNS and the Service would lead to;
//   - each volume is a directory under the pod's root on the host (a Secret's or a
//     ConfigMap's keys written there as files, an emptyDir or a claim an empty directory),
//     and an argument naming a path under a mount names the same path under that directory;
//   - the container's binary is the host's build of it (the image's ENTRYPOINT when the
//     container gives no command);
//   - the environment is the container's (values, Secret keys, the pod's name and
//     namespace) with HOME, PATH, TMPDIR and HOSTNAME, plus what the caller adds for what a
//     pod has and a host process has not (the service account's credentials, DNS).
type hostKubelet struct {
	t          *testing.T
	cs         kubernetes.Interface
	namespace  string
	net        *hostNet
	root       string
	binaries   map[string]string // image path (e.g. /usr/local/bin/controller) -> host binary
	entrypoint string            // the image's ENTRYPOINT
}

// hostContainer is a pod's container running as a host process.
type hostContainer struct {
	pod  *hostPod
	args []string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// runOptions are what the caller adds to a pod's container.
type runOptions struct {
	// dials says the process dials cluster names given in its arguments (the controller's
	// and the replicas' peers and storage); an operator only passes them on.
	dials bool
	env   []string
	// claims are the volume claim templates of the pod's StatefulSet.
	claims []string
}

// run starts the only container of a pod placed on the host network with hostNet.addPod.
func (k *hostKubelet) run(ctx context.Context, pod *hostPod, spec corev1.PodSpec, o runOptions) (*hostContainer, error) {
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		return nil, fmt.Errorf("pod %s: %d containers and %d init containers, want one container", pod.name, len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	podRoot := filepath.Join(k.root, pod.name)
	if err := os.MkdirAll(podRoot, 0o700); err != nil {
		return nil, err
	}
	mounts, err := k.mountVolumes(ctx, podRoot, spec, c, o.claims)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod.name, err)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if args[i], err = k.rewriteArg(pod, a, mounts, o.dials); err != nil {
			return nil, fmt.Errorf("pod %s: argument %q: %w", pod.name, a, err)
		}
	}
	env, err := k.environment(ctx, pod, podRoot, c, mounts)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod.name, err)
	}
	image := k.entrypoint
	if len(c.Command) > 0 {
		image = c.Command[0]
		args = append(append([]string(nil), c.Command[1:]...), args...)
	}
	bin, ok := k.binaries[image]
	if !ok {
		return nil, fmt.Errorf("pod %s runs %s, which is not one of the binaries built for the host", pod.name, image)
	}
	hc := &hostContainer{pod: pod, args: args, log: filepath.Join(podRoot, "container.log"), done: make(chan struct{})}
	logf, err := os.Create(hc.log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "--- %s %s\n", bin, strings.Join(args, " "))
	k.t.Logf("pod %s runs %s %s", pod.name, filepath.Base(bin), strings.Join(args, " "))
	hc.cmd = exec.Command(bin, args...)
	hc.cmd.Env = append(env, o.env...)
	hc.cmd.Stdout, hc.cmd.Stderr = logf, logf
	if err := hc.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("pod %s: start %s: %w", pod.name, bin, err)
	}
	go func() {
		err := hc.cmd.Wait()
		fmt.Fprintf(logf, "--- exited: %v\n", err)
		logf.Close()
		close(hc.done)
	}()
	k.t.Cleanup(func() {
		hc.stop()
		if k.t.Failed() {
			k.t.Logf("pod %s, last lines of its log:\n%s", pod.name, tail(hc.log, 40))
		}
	})
	return hc, nil
}

// exited reports whether the process ended.
func (hc *hostContainer) exited() bool {
	select {
	case <-hc.done:
		return true
	default:
		return false
	}
}

// stop ends the process as a kubelet would: SIGTERM, then SIGKILL after a grace period.
func (hc *hostContainer) stop() {
	if hc.exited() {
		return
	}
	_ = hc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-hc.done:
	case <-time.After(10 * time.Second):
		_ = hc.cmd.Process.Kill()
		<-hc.done
	}
}

// mountVolumes materializes every volume the container mounts under podRoot and returns
// the container's mount paths with their host directories.
func (k *hostKubelet) mountVolumes(ctx context.Context, podRoot string, spec corev1.PodSpec, c corev1.Container, claims []string) (map[string]string, error) {
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" || m.SubPathExpr != "" {
			return nil, fmt.Errorf("mount %s uses a sub-path, which the host does not play", m.MountPath)
		}
		dir := filepath.Join(podRoot, "fs", m.MountPath)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		data, err := k.volumeData(ctx, spec, m.Name, claims)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", m.Name, err)
		}
		for key, value := range data {
			if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
				return nil, err
			}
		}
		mounts[m.MountPath] = dir
	}
	return mounts, nil
}

// volumeData is the files of a volume: a Secret's or a ConfigMap's keys (waiting for the
// object, as a kubelet holds a pod until its Secret exists), nothing for an emptyDir or a
// claim.
func (k *hostKubelet) volumeData(ctx context.Context, spec corev1.PodSpec, name string, claims []string) (map[string][]byte, error) {
	for _, v := range spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.Secret != nil:
			s, err := k.secret(ctx, v.Secret.SecretName)
			if err != nil {
				return nil, err
			}
			return s.Data, nil
		case v.ConfigMap != nil:
			cm, err := k.cs.CoreV1().ConfigMaps(k.namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("ConfigMap %s: %w", v.ConfigMap.Name, err)
			}
			out := map[string][]byte{}
			for key, value := range cm.Data {
				out[key] = []byte(value)
			}
			return out, nil
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
			return nil, nil
		}
		return nil, fmt.Errorf("a kind of volume the host does not play: %+v", v.VolumeSource)
	}
	for _, c := range claims {
		if c == name {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("no such volume or claim template")
}

// secret waits for a Secret of the namespace (an operator may issue it after the pod is
// created) and returns it.
func (k *hostKubelet) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		s, err := k.cs.CoreV1().Secrets(k.namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return s, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Secret %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("Secret %s never appeared", name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rewriteArg rewrites the addresses and mounted paths in one "--flag=value" argument (a
// value may be a comma-separated list of addresses).
func (k *hostKubelet) rewriteArg(pod *hostPod, arg string, mounts map[string]string, dials bool) (string, error) {
	flag, value, ok := strings.Cut(arg, "=")
	if !ok {
		return arg, nil
	}
	// The deepest mount holding the path, as in the container's filesystem.
	best := ""
	for mountPath := range mounts {
		if (value == mountPath || strings.HasPrefix(value, mountPath+"/")) && len(mountPath) > len(best) {
			best = mountPath
		}
	}
	if best != "" {
		return flag + "=" + mounts[best] + strings.TrimPrefix(value, best), nil
	}
	parts := strings.Split(value, ",")
	for i, p := range parts {
		host, port, err := net.SplitHostPort(p)
		if err != nil || port == "" || strings.Trim(port, "0123456789") != "" {
			continue
		}
		switch {
		case host == "":
			n, err := strconv.Atoi(port)
			if err != nil {
				return "", err
			}
			if parts[i], err = pod.listenAddr(int32(n)); err != nil {
				return "", err
			}
		case dials:
			if parts[i], err = k.net.resolve(p); err != nil {
				return "", err
			}
		}
	}
	return flag + "=" + strings.Join(parts, ","), nil
}

// environment is the container's environment as the kubelet sets it.
func (k *hostKubelet) environment(ctx context.Context, pod *hostPod, podRoot string, c corev1.Container, mounts map[string]string) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("envFrom, which the host does not play")
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + podRoot, "HOSTNAME=" + pod.name}
	if dir, ok := mounts["/tmp"]; ok {
		env = append(env, "TMPDIR="+dir)
	}
	for _, e := range c.Env {
		v, err := k.envValue(ctx, pod, e)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

func (k *hostKubelet) envValue(ctx context.Context, pod *hostPod, e corev1.EnvVar) (string, error) {
	switch from := e.ValueFrom; {
	case from == nil:
		return e.Value, nil
	case from.SecretKeyRef != nil:
		s, err := k.secret(ctx, from.SecretKeyRef.Name)
		if err != nil {
			return "", err
		}
		v, ok := s.Data[from.SecretKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("Secret %s has no key %s", from.SecretKeyRef.Name, from.SecretKeyRef.Key)
		}
		return string(v), nil
	case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.namespace":
		return k.namespace, nil
	case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.name":
		return pod.name, nil
	}
	return "", fmt.Errorf("a source the host does not play: %+v", e.ValueFrom)
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
