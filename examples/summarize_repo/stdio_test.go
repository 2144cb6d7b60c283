package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
)

// These tests run the example with -stdio: as a subprocess of its one
// client, on stdin and stdout. TestREADMEStdio replays the README's pipe
// blocks; the interop suites run real clients over stdio against the
// conformance fixture, which serves with the same transport.

const stdioWait = 10 * time.Second

func TestParseFlagsStdio(t *testing.T) {
	s, err := parseFlags([]string{"-stdio", "-dir", "/tmp", "-model-url", "http://127.0.0.1:9/v1", "-model", "m"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Falsef(t, !s.Stdio || s.Config.Dir != "/tmp" || !s.DirectModel(), "settings %+v", s)
	if s, _ := parseFlags(nil, func(string) string { return "" }, io.Discard); s.Stdio {
		require.FailNow(t, "-stdio is on by default")
	}
	if _, err := parseFlags([]string{"-stdio", "-addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard); err == nil {
		require.FailNow(t, "-stdio with -addr accepted")
	}
}

// lineClient is the client end of a stdio server: it writes lines and
// reads them.
type lineClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func newLineClient(t *testing.T, in io.WriteCloser, out io.Reader) *lineClient {
	c := &lineClient{t: t, in: in, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				c.lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	require.Falsef(c.t, strings.Contains(line, "\n"), "a message on stdio is one line: %q", line)
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		require.FailNow(c.t, fmt.Sprint(err))
	}
}

func (c *lineClient) next() map[string]any {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		require.True(c.t, ok, "the server closed its output")
		var m map[string]any
		require.NoErrorf(c.t, json.Unmarshal([]byte(l), &m), "the server wrote a line that is not JSON: %q", l)
		return m
	case <-time.After(stdioWait):
		require.FailNow(c.t, "the server wrote nothing")
		return nil
	}
}

func stdioTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"README.md": "# tiny\n\nA tiny Go program that greets.\n",
		"go.mod":    "module example.com/tiny\n\ngo 1.26\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`

// TestRunStdio serves a 2026-07-28 call and then a session of the
// initialize era (a second process), each over a pair of pipes, and checks
// that runStdio returns nil when its input ends.
func TestRunStdio(t *testing.T) {
	serve := func(t *testing.T) (*lineClient, chan error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := runStdio(context.Background(), Settings{Config: Config{Dir: stdioTree(t)}}, inR, outW, quietLogger())
			_ = outW.Close()
			done <- err
		}()
		t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
		return newLineClient(t, inW, outR), done
	}
	end := func(t *testing.T, c *lineClient, done chan error) {
		t.Helper()
		_ = c.in.Close()
		select {
		case err := <-done:
			require.NoError(t, err, "runStdio")
		case <-time.After(stdioWait):
			require.FailNow(t, "runStdio did not return when its input ended")
		}
	}

	t.Run("2026-07-28", func(t *testing.T) {
		c, done := serve(t)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize_repo","arguments":{"audience":"developer"},` + modernMeta + `}}`)
		r := c.next()
		state, _ := field(r, "result", "requestState").(string)
		require.Falsef(t, field(r, "result", "resultType") != "input_required" || field(r, "result", "inputRequests", KeyPickFiles, "method") != "sampling/createMessage" || state == "", "round 1: %v", r)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize_repo","arguments":{"audience":"developer"},` +
			`"inputResponses":{"pick_files":{"role":"assistant","model":"m","content":{"type":"text","text":"[\"main.go\"]"}}},` +
			`"requestState":"` + state + `",` + modernMeta + `}}`)
		r = c.next()
		require.Falsef(t, field(r, "id") != float64(2) || field(r, "result", "inputRequests", KeySummary, "method") != "sampling/createMessage", "round 2: %v", r)
		end(t, c, done)
	})

	t.Run("2025-11-25", func(t *testing.T) {
		c, done := serve(t)
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"stdio-test","version":"1.0.0"}}}`)
		if r := c.next(); field(r, "result", "protocolVersion") != "2025-11-25" || field(r, "result", "serverInfo", "name") != "summarize-repo" {
			require.FailNow(t, fmt.Sprintf("initialize: %v", r))
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize_repo","arguments":{"audience":"developer"}}}`)
		replies := []string{`[\"main.go\", \"go.mod\"]`, "A tiny Go program that greets."}
		var ids []float64
		for _, text := range replies {
			q := c.next()
			id, _ := field(q, "id").(float64)
			require.Falsef(t, field(q, "method") != "sampling/createMessage" || id < 1, "want a sampling/createMessage request, got %v", q)
			ids = append(ids, id)
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"role":"assistant","model":"m","stopReason":"endTurn","content":{"type":"text","text":"%s"}}}`, id, text))
		}
		assert.Falsef(t, ids[0] == ids[1], "the two questions have one id: %v", ids)
		r := c.next()
		files, _ := field(r, "result", "structuredContent", "files").([]any)
		require.Falsef(t, field(r, "id") != float64(1) || field(r, "result", "structuredContent", "summary") != replies[1] || len(files) != 2 || field(r, "result", "resultType") != nil, "result: %v", r)
		end(t, c, done)
	})
}

// mainEnv makes the test binary run main with the arguments it holds (see
// TestMain).
const mainEnv = "SUMMARIZE_REPO_TEST_MAIN"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainEnv); args != "" {
		os.Args = append([]string{"summarize_repo"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdioProcess runs the example as a host does: nothing but JSON-RPC
// messages on its stdout (the logs, including the start-up warning about
// MRTRKIT_STATE_KEYS, go to stderr), exit status 0 when stdin closes, and
// on SIGTERM; a bad command line exits 2 with nothing on stdout.
func TestStdioProcess(t *testing.T) {
	start := func(t *testing.T, args string) (*testkit.Process, *lineClient) {
		p := testkit.StartProcess(t, append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "MRTRKIT_STATE_KEYS=")
		}), mainEnv+"="+args))
		return p, newLineClient(t, p.Stdin, p.Stdout)
	}
	// rest reads what the process writes until it closes its stdout.
	rest := func(t *testing.T, c *lineClient) []string {
		t.Helper()
		var got []string
		timeout := time.After(stdioWait)
		for {
			select {
			case l, ok := <-c.lines:
				if !ok {
					return got
				}
				got = append(got, l)
			case <-timeout:
				require.FailNow(t, "the process did not close its stdout")
			}
		}
	}
	dir := stdioTree(t)

	t.Run("stdin closed", func(t *testing.T) {
		t.Parallel()
		p, c := start(t, "-stdio -dir "+dir)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize_repo","arguments":{"audience":"developer"},` + modernMeta + `}}`)
		c.send(`not json`)
		got := map[any]map[string]any{}
		for range 3 {
			m := c.next()
			got[m["id"]] = m
		}
		_ = p.Stdin.Close()
		for _, l := range rest(t, c) {
			assert.Fail(t, fmt.Sprintf("stdout carries more than the answers: %q", l))
		}
		if code := p.Exit(t, stdioWait); code != 0 {
			require.FailNow(t, fmt.Sprintf("exit status %d, stderr:\n%s", code, p.Stderr.String()))
		}
		assert.Falsef(t, field(got[float64(1)], "result", "resultType") != "complete" || field(got[float64(2)], "result", "resultType") != "input_required" ||
			field(got[nil], "error", "code") != float64(-32700), "answers %v", got)
		for _, want := range []string{"MRTRKIT_STATE_KEYS", "serving on stdio", "stdin ended"} {
			assert.Containsf(t, p.Stderr.String(), want, "stderr lacks %q:\n%s", want, p.Stderr.String())
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		p, c := start(t, "-stdio -dir "+dir)
		defer p.Stdin.Close()
		c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
		c.next()
		require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
		rest(t, c)
		if code := p.Exit(t, stdioWait); code != 0 {
			require.FailNow(t, fmt.Sprintf("exit status %d, stderr:\n%s", code, p.Stderr.String()))
		}
	})
	t.Run("bad command line", func(t *testing.T) {
		t.Parallel()
		p, c := start(t, "-stdio -addr 127.0.0.1:0")
		defer p.Stdin.Close()
		for _, l := range rest(t, c) {
			assert.Fail(t, fmt.Sprintf("stdout carries %q", l))
		}
		if code := p.Exit(t, stdioWait); code != 2 {
			require.FailNow(t, fmt.Sprintf("exit status %d, want 2; stderr:\n%s", code, p.Stderr.String()))
		}
		assert.Containsf(t, p.Stderr.String(), "exclude each other", "stderr:\n%s", p.Stderr.String())
	})
}

// TestREADMEStdio replays the README's pipe blocks (tag stdio) with a
// built binary, in a directory that holds the files the README's round 2
// picks, as the repository root does.
func TestREADMEStdio(t *testing.T) {
	needTools(t)
	for _, tool := range []string{"go", "head", "base64"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "the README's stdio blocks need %s, which is not installed", tool)
		}
	}
	root := repoRoot(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "summarize_repo"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		require.FailNow(t, fmt.Sprintf("go build: %v\n%s", err, out))
	}
	for _, p := range readmePick {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), b, 0o644))
	}
	out := replayIn(t, dir, nil, readmeBlocks(t), "stdio")
	if d := jsonIn(t, "stdio-discover", out["stdio-discover"]); field(d, "id") != float64(1) || field(d, "result", "resultType") != "complete" ||
		field(d, "result", "_meta", "io.modelcontextprotocol/serverInfo", "name") != "summarize-repo" {
		assert.Fail(t, fmt.Sprintf("stdio-discover: %v", d))
	}
	r := jsonIn(t, "stdio-round-1", out["stdio-round-1"])
	assert.Falsef(t, field(r, "id") != float64(2) || field(r, "result", "resultType") != "input_required" ||
		field(r, "result", "inputRequests", KeyPickFiles, "method") != "sampling/createMessage" || field(r, "result", "requestState") == nil, "stdio-round-1: %v", r)
	r = jsonIn(t, "stdio-round-2", out["stdio-round-2"])
	assert.Falsef(t, field(r, "id") != float64(4) || field(r, "result", "resultType") != "input_required" ||
		field(r, "result", "inputRequests", KeySummary, "method") != "sampling/createMessage", "stdio-round-2: %v", r)
}
