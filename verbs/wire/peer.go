package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// ErrDenied means the kernel socket is another user's: its permissions
// refused the connection, the process listening on it runs as another
// user (a client sends it nothing), or — seen from the kernel — the
// process connecting does (the kernel answers it with this error only).
var ErrDenied = errors.New("kernel socket belongs to another user")

// PeerUID is the uid of the process at the other end of a unix socket
// connection (SO_PEERCRED): for a client, the kernel that listens; for
// the kernel, the client that connected.
func PeerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("peer credentials: %T is not a unix socket", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	uid := -1
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			credErr = err
			return
		}
		uid = int(cred.Uid)
	}); err != nil {
		return -1, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return -1, fmt.Errorf("peer credentials: %w", credErr)
	}
	return uid, nil
}

// checkPeer refuses a connection whose listening end runs as another
// user: a socket left (or planted) at a fixed path in /tmp must not
// receive this user's requests.
func checkPeer(c net.Conn, path string) error {
	uid, err := PeerUID(c)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrDenied, path, err)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("%w: the process listening on %s runs as uid %d, not as this user (uid %d); nothing was sent to it (remove the socket, or use your own agent root: PI_CODING_AGENT_DIR)", ErrDenied, path, uid, os.Getuid())
	}
	return nil
}

// dialError classifies a failed connect: a socket this user may not open
// is another user's (ErrDenied), anything else means no kernel answers
// (ErrUnavailable).
func dialError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %s: %v (use your own agent root: PI_CODING_AGENT_DIR)", ErrDenied, path, err)
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}
