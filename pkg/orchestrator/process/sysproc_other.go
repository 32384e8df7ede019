//go:build unix && !linux

package process

import (
	"os/exec"
	"syscall"
)

// configureCmd puts the child in its own process group. Without Pdeathsig a
// crashed controller can leave the child running; only Linux is supported for
// that guarantee.
func configureCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the child's whole process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
