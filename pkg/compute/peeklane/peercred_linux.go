package peeklane

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkSameUser refuses a unix-socket peer running as another user.
func checkSameUser(nc net.Conn) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("peek lane: same-user check needs a unix socket, got %T", nc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("peek lane peer credentials: %w", err)
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("peek lane peer credentials: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("peek lane peer credentials: %w", cerr)
	}
	if want := uint32(os.Getuid()); cred.Uid != want {
		return fmt.Errorf("peek lane peer runs as uid %d, not this replica's %d", cred.Uid, want)
	}
	return nil
}
