package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests drive the fixture server over stdio (-stdio, runStdio): the
// 2026-07-28 wire message by message, a 2025-11-25 session when the first
// message is initialize, cancellation, and the process itself (stdout
// carries nothing but MCP messages, exit 0 when stdin closes or on
// SIGTERM). The interop suites (conformance/interop) drive the same mode
// with real clients.

const stdioWait = 10 * time.Second

// stdioClient is the client end of a fixture served by runStdio in this
// process.
type stdioClient struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Reader
	done chan error
}

func startStdio(t *testing.T) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		err := runStdio(context.Background(), inR, outW, 2*time.Second, log)
		_ = outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return c
}

func (c *stdioClient) send(msg obj) {
	c.t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message the server writes.
func (c *stdioClient) next() obj {
	c.t.Helper()
	type read struct {
		line string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		l, err := c.out.ReadString('\n')
		ch <- read{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("reading the server's output: %v", r.err)
		}
		var m obj
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			c.t.Fatalf("the server wrote a line that is not JSON: %q", r.line)
		}
		return m
	case <-time.After(stdioWait):
		c.t.Fatal("the server wrote nothing")
		return nil
	}
}

// closeAndWait closes the server's input and waits for runStdio to return.
func (c *stdioClient) closeAndWait() {
	c.t.Helper()
	_ = c.in.Close()
	go func() { _, _ = io.Copy(io.Discard, c.out) }()
	select {
	case err := <-c.done:
		if err != nil {
			c.t.Fatalf("runStdio: %v", err)
		}
	case <-time.After(stdioWait):
		c.t.Fatal("runStdio did not return when its input ended")
	}
}

func modernRequest(id any, method string, params obj, caps obj) obj {
	if params == nil {
		params = obj{}
	}
	params["_meta"] = obj{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	return obj{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

func textOfResult(t *testing.T, m obj) string {
	t.Helper()
	r, ok := m["result"].(obj)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", m)
	}
	s, _ := content[0].(obj)["text"].(string)
	return s
}

func TestStdioModernCancel(t *testing.T) {
	c := startStdio(t)
	c.send(modernRequest(1, "server/discover", nil, obj{}))
	d := c.next()
	if d["id"] != float64(1) || d["result"].(obj)["resultType"] != "complete" {
		t.Fatalf("discover: %v", d)
	}

	// test_slow reports progress once it runs, then waits to be cancelled.
	slow := modernRequest("slow", "tools/call", obj{"name": slowTool, "arguments": obj{}}, obj{})
	slow["params"].(obj)["_meta"].(obj)["progressToken"] = "p1"
	c.send(slow)
	p := c.next()
	if p["method"] != "notifications/progress" || p["params"].(obj)["progressToken"] != "p1" {
		t.Fatalf("want the progress notification of test_slow, got %v", p)
	}
	c.send(obj{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": obj{"requestId": "slow", "reason": "test"}})

	// The cancelled call is not answered: the next message is the status.
	deadline := time.Now().Add(stdioWait)
	for i := 2; ; i++ {
		c.send(modernRequest(i, "tools/call", obj{"name": slowStatusTool, "arguments": obj{}}, obj{}))
		m := c.next()
		if m["id"] != float64(i) {
			t.Fatalf("want the answer to %d, got %v", i, m)
		}
		s := textOfResult(t, m)
		if strings.HasPrefix(s, "running=0 cancelled=1 finished=0") {
			if !strings.Contains(s, `last_cause="stdio: the client cancelled the request"`) {
				t.Errorf("status %q", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("test_slow was not stopped: %s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.send(modernRequest(100, "tools/call", obj{"name": "test_simple_text", "arguments": obj{}}, obj{}))
	if s := textOfResult(t, c.next()); s != "This is a simple text response for testing." {
		t.Errorf("test_simple_text after the cancellation: %q", s)
	}
	c.closeAndWait()
}

func TestStdioLegacyThreeRounds(t *testing.T) {
	c := startStdio(t)
	c.send(obj{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": obj{
		"protocolVersion": "2025-11-25",
		"capabilities":    obj{"elicitation": obj{"form": obj{}}, "sampling": obj{}, "roots": obj{}},
		"clientInfo":      obj{"name": "stdio-test", "version": "1.0.0"},
	}})
	init := c.next()
	if init["result"].(obj)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", init)
	}
	c.send(obj{"jsonrpc": "2.0", "method": "notifications/initialized"})
	c.send(obj{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": obj{"name": threeRoundsTool, "arguments": obj{}}})
	answers := map[string]obj{
		"elicitation/create":     {"action": "accept", "content": obj{"name": "Alice"}},
		"sampling/createMessage": {"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "Paris"}},
		"roots/list":             {"roots": []any{obj{"uri": "file:///tmp/r", "name": "r"}}},
	}
	var asked []string
	for {
		m := c.next()
		if m["method"] == nil {
			if m["id"] != float64(1) {
				t.Fatalf("unexpected answer %v", m)
			}
			if s := textOfResult(t, m); s != "Three rounds completed: elicitation=Alice; sampling=Paris; roots=file:///tmp/r" {
				t.Errorf("text %q", s)
			}
			break
		}
		method, _ := m["method"].(string)
		a, ok := answers[method]
		if !ok || m["id"] == nil {
			t.Fatalf("unexpected message %v", m)
		}
		asked = append(asked, method)
		c.send(obj{"jsonrpc": "2.0", "id": m["id"], "result": a})
	}
	if strings.Join(asked, ",") != "elicitation/create,sampling/createMessage,roots/list" {
		t.Errorf("asked %v", asked)
	}
	c.closeAndWait()
}

// The process: TestMain runs main when this variable is set.
const mainEnv = "MRTRKIT_FIXTURE_MAIN"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainEnv); args != "" {
		os.Args = append([]string{"server"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdioProcess runs the fixture as a client's subprocess: every line
// on its stdout is a JSON-RPC message (the logs, the flag errors go to
// stderr), and it exits 0 when its stdin closes, with a call in flight,
// and on SIGTERM.
func TestStdioProcess(t *testing.T) {
	start := func(t *testing.T) (*exec.Cmd, io.WriteCloser, io.Reader, *lockedBuf, chan error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), mainEnv+"=-stdio -v")
		stderr := &lockedBuf{}
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		exited := make(chan error, 1)
		return cmd, in, out, stderr, exited
	}
	wait := func(t *testing.T, cmd *exec.Cmd, exited chan error) {
		t.Helper()
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("exit: %v, want status 0", err)
			}
		case <-time.After(stdioWait):
			t.Fatal("the process did not exit")
		}
	}

	t.Run("stdin closed", func(t *testing.T) {
		t.Parallel()
		cmd, in, out, stderr, exited := start(t)
		lines := make(chan []string, 1)
		go func() {
			var got []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			lines <- got
		}()
		for i, m := range []obj{
			modernRequest(1, "server/discover", nil, obj{}),
			modernRequest(2, "tools/call", obj{"name": "test_tool_with_logging", "arguments": obj{}}, obj{}),
			modernRequest(3, "tools/call", obj{"name": slowTool, "arguments": obj{}}, obj{}),
		} {
			b, _ := json.Marshal(m)
			if _, err := fmt.Fprintf(in, "%s\n", b); err != nil {
				t.Fatal(i, err)
			}
		}
		time.Sleep(300 * time.Millisecond) // test_tool_with_logging takes about 100 ms
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		wait(t, cmd, exited)
		got := <-lines
		ids := map[float64]bool{}
		for _, l := range got {
			var m obj
			if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("stdout carries a line that is not a JSON-RPC message: %q", l)
				continue
			}
			if id, ok := m["id"].(float64); ok {
				ids[id] = true
			}
		}
		if !ids[1] || !ids[2] {
			t.Errorf("answers to %v on stdout, want 1 and 2:\n%s", ids, strings.Join(got, "\n"))
		}
		if !strings.Contains(stderr.String(), "serving on stdio") || !strings.Contains(stderr.String(), "stdin ended") {
			t.Errorf("stderr:\n%s", stderr.String())
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		cmd, in, out, stderr, exited := start(t)
		defer in.Close()
		go func() { _, _ = io.Copy(io.Discard, out) }()
		deadline := time.Now().Add(stdioWait)
		for !strings.Contains(stderr.String(), "serving on stdio") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		wait(t, cmd, exited)
	})
}

// lockedBuf collects a process's stderr, read while it is written.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
