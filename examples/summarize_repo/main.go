package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	s, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err != nil {
		log.Error("summarize_repo: bad command line", "err", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if s.Stdio {
		// stdout carries the MCP messages: every log goes to stderr.
		if err := runStdio(ctx, s, os.Stdin, os.Stdout, log); err != nil {
			log.Error("summarize_repo", "err", err)
			stop()
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		log.Error("summarize_repo: listen", "err", err)
		os.Exit(1)
	}
	if err := run(ctx, s, ln, log); err != nil {
		log.Error("summarize_repo", "err", err)
		os.Exit(1)
	}
}
