package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, os.Args[1:], &env{
			stdin:    os.Stdin,
			stdout:   os.Stdout,
			stderr:   os.Stderr,
			getenv:   os.Getenv,
			terminal: isTerminal(os.Stdin),
		})
	}()
	select {
	case code := <-done:
		os.Exit(code)
	case <-sig:
		// Cancelling closes the request's connection, which is how a
		// client cancels a request over HTTP. A question waiting for the
		// user's answer cannot be interrupted, so do not wait for long.
		cancel()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		fmt.Fprintln(os.Stderr, "mcpcall: interrupted")
		os.Exit(130)
	}
}

// isTerminal reports whether f looks like a terminal: a character device
// other than the null device.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}
