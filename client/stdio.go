package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLine bounds one line the server writes on stdout.
const maxLine = 16 << 20

// stderrTail is how much of a subprocess's stderr an error quotes.
const stderrTail = 2048

// StdioOption configures the stdio transport.
type StdioOption interface{ applyStdio(*stdioTransport) }

type stdioOptionFunc func(*stdioTransport)

func (f stdioOptionFunc) applyStdio(t *stdioTransport) { f(t) }

// WithShutdownTimeout sets how long Close waits for the server to exit
// after its stdin closes, before SIGTERM, and again before SIGKILL
// (default 2s).
func WithShutdownTimeout(d time.Duration) StdioOption {
	return stdioOptionFunc(func(t *stdioTransport) { t.grace = d })
}

// WithStderr copies the server's stderr to w as well (it is always kept,
// its tail quoted when the server fails).
func WithStderr(w io.Writer) StdioOption {
	return stdioOptionFunc(func(t *stdioTransport) { t.stderr = w })
}

// WithSecretEnv names environment variables of the client that must not
// reach the server, in addition to those the transport always leaves out
// (names containing TOKEN, SECRET, PASSWORD, CREDENTIAL, API_KEY or
// APIKEY, and AUTHORIZATION).
func WithSecretEnv(names ...string) StdioOption {
	return stdioOptionFunc(func(t *stdioTransport) { t.secrets = append(t.secrets, names...) })
}

type stdioTransport struct {
	cmd     *exec.Cmd
	grace   time.Duration
	stderr  io.Writer
	secrets []string
}

// Command is the stdio transport: it starts cmd (which must not have
// been started, and whose Stdin, Stdout and Stderr must be unset) and
// speaks newline-delimited JSON-RPC on its stdin and stdout. The child's
// environment is cmd.Env (the client's own when nil) without the client's
// credentials: see WithSecretEnv. Close closes the child's stdin, waits,
// then sends SIGTERM and at last SIGKILL.
func Command(cmd *exec.Cmd, opts ...StdioOption) Transport {
	t := &stdioTransport{cmd: cmd, grace: 2 * time.Second}
	for _, o := range opts {
		o.applyStdio(t)
	}
	return t
}

func (t *stdioTransport) String() string { return "stdio:" + strings.Join(t.cmd.Args, " ") }

// secretName reports whether an environment variable looks like a
// credential of the client.
func secretName(name string, extra []string) bool {
	u := strings.ToUpper(name)
	for _, s := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY", "AUTHORIZATION"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	for _, e := range extra {
		if strings.EqualFold(e, name) {
			return true
		}
	}
	return false
}

// childEnv filters env for the child.
func childEnv(env []string, extra []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !secretName(name, extra) {
			out = append(out, kv)
		}
	}
	return out
}

func (t *stdioTransport) dial(ctx context.Context, c *Client) (conn, error) {
	cmd := t.cmd
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("the command's Stdin, Stdout and Stderr must be unset")
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = childEnv(env, t.secrets)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &stdioConn{t: t, c: c, cmd: cmd, in: stdin, pending: map[int64]chan *message{}, done: make(chan struct{})}
	s.tail = &tailBuffer{max: stderrTail}
	if t.stderr != nil {
		cmd.Stderr = io.MultiWriter(s.tail, t.stderr)
	} else {
		cmd.Stderr = s.tail
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	s.bg, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	go s.wait()
	go s.read(stdout)
	return s, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "?")
}

// stdioConn is a running server subprocess.
type stdioConn struct {
	t    *stdioTransport
	c    *Client
	cmd  *exec.Cmd
	tail *tailBuffer
	bg   context.Context
	stop context.CancelFunc

	wmu sync.Mutex // one line at a time on stdin
	in  io.WriteCloser

	mu      sync.Mutex
	pending map[int64]chan *message
	notes   map[int64]func(*message)
	readErr error

	done    chan struct{} // closed when the process has exited
	waitErr error
	closing bool
}

// wait reaps the process.
func (s *stdioConn) wait() {
	err := s.cmd.Wait()
	s.mu.Lock()
	s.waitErr = err
	s.mu.Unlock()
	close(s.done)
}

// exitError describes how the process ended, with the tail of its
// stderr.
func (s *stdioConn) exitError() error {
	select {
	case <-s.done:
	case <-time.After(time.Second):
		// The process closed stdout but has not exited yet.
	}
	var b strings.Builder
	b.WriteString("the server process ")
	st := s.cmd.ProcessState
	switch {
	case st == nil:
		b.WriteString("closed its stdout")
	default:
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Fprintf(&b, "was killed by signal %s", ws.Signal())
		} else {
			fmt.Fprintf(&b, "exited with code %d", st.ExitCode())
		}
	}
	if tail := strings.TrimSpace(s.tail.String()); tail != "" {
		fmt.Fprintf(&b, "; stderr ends: %s", tail)
	}
	return errors.New(b.String())
}

// read dispatches the lines of the server's stdout.
func (s *stdioConn) read(out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br)
		if err != nil {
			break
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		m, perr := parseMessage(line)
		if perr != nil {
			continue // not ours to answer: a stray line on stdout
		}
		switch {
		case m.isResponse():
			s.mu.Lock()
			ch := s.pending[m.intID()]
			s.mu.Unlock()
			if ch != nil {
				select {
				case ch <- m:
				default:
				}
			}
		case m.hasID():
			go func() {
				body := s.c.serveRequest(s.bg, m)
				_ = s.write(body)
			}()
		default:
			// A notification goes to every call that listens for its own
			// (each filters by its token or subscription), or to the
			// client when no call listens.
			s.mu.Lock()
			fns := make([]func(*message), 0, len(s.notes))
			for _, f := range s.notes {
				fns = append(fns, f)
			}
			s.mu.Unlock()
			if len(fns) == 0 {
				s.c.notifyUser(m)
			}
			for _, f := range fns {
				f(m)
			}
		}
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		err = ErrClosed
	} else if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
		err = s.exitError()
	}
	s.mu.Lock()
	s.readErr = err
	for _, ch := range s.pending {
		select {
		case ch <- nil:
		default:
		}
	}
	s.mu.Unlock()
}

// readLine reads one line, bounded by maxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > maxLine {
			return nil, fmt.Errorf("the server wrote a line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

func (s *stdioConn) write(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	_, err := s.in.Write(buf)
	return err
}

func (s *stdioConn) send(ctx context.Context, out *outbound) (*message, int, error) {
	ch := make(chan *message, 1)
	s.mu.Lock()
	if s.readErr != nil {
		err := s.readErr
		s.mu.Unlock()
		return nil, 0, err
	}
	s.pending[out.id] = ch
	if out.onNote != nil {
		if s.notes == nil {
			s.notes = map[int64]func(*message){}
		}
		s.notes[out.id] = out.onNote
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, out.id)
		delete(s.notes, out.id)
		s.mu.Unlock()
	}()
	if err := s.write(out.body); err != nil {
		s.mu.Lock()
		rerr := s.readErr
		s.mu.Unlock()
		if rerr != nil {
			return nil, 0, rerr
		}
		return nil, 0, fmt.Errorf("writing to the server: %w; %v", err, s.exitErrorNow())
	}
	select {
	case m := <-ch:
		if m == nil {
			s.mu.Lock()
			err := s.readErr
			s.mu.Unlock()
			return nil, 0, err
		}
		return m, 0, nil
	case <-ctx.Done():
		_ = s.write(requestBody(0, "notifications/cancelled", objectOf([]member{
			{"requestId", mustJSON(out.id)}, {"reason", mustJSON(ctx.Err().Error())}})))
		return nil, 0, ctx.Err()
	}
}

// exitErrorNow describes the process if it has exited.
func (s *stdioConn) exitErrorNow() error {
	select {
	case <-s.done:
		return s.exitError()
	case <-time.After(200 * time.Millisecond):
		return errors.New("the server process is still running")
	}
}

func (s *stdioConn) notify(ctx context.Context, method string, body []byte) error {
	return s.write(body)
}

func (s *stdioConn) setVersion(string)            {}
func (s *stdioConn) startSession(context.Context) {}

// close shuts the server down: stdin closed, then SIGTERM, then SIGKILL.
func (s *stdioConn) close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.stop()
	_ = s.in.Close()
	for _, sig := range []os.Signal{nil, syscall.SIGTERM, os.Kill} {
		if sig != nil {
			_ = s.cmd.Process.Signal(sig)
		}
		select {
		case <-s.done:
			return nil
		case <-time.After(s.t.grace):
		}
	}
	<-s.done
	return nil
}
