package main

import (
	"net"
	"syscall"
	"unsafe"
)

// TCP states of Linux's tcp_states.h that mean the peer closed or reset
// the connection.
const (
	tcpCloseWait = 8
	tcpClose     = 7
)

// peerClosed returns "FIN" when the peer of conn has closed its side (the
// socket is in CLOSE_WAIT), "reset" when the connection is gone, and ""
// otherwise. It reads TCP_INFO, not the receive queue, so unread data
// stays unread.
func peerClosed(conn net.Conn) string {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return ""
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ""
	}
	var info syscall.TCPInfo
	var gerr syscall.Errno
	if err := raw.Control(func(fd uintptr) {
		size := uint32(unsafe.Sizeof(info))
		_, _, gerr = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	}); err != nil || gerr != 0 {
		return ""
	}
	switch info.State {
	case tcpCloseWait:
		return "FIN"
	case tcpClose:
		return "reset"
	}
	return ""
}
