//go:build linux

package process

import (
	"os/exec"
	"syscall"
)

// configureCmd puts the child in its own process group and asks the kernel to
// kill it if the controller dies, so a crashed controller leaves no orphans.
func configureCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the child's whole process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
