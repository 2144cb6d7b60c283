package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example server lives in package main (examples/summarize_repo), which
// Go does not let another package import, so its NewApp cannot be served
// on httptest here. The test builds the example exactly as `go run
// ./examples/summarize_repo` would and runs it on a loopback port chosen
// by the kernel (-addr 127.0.0.1:0), reading the URL from its start-up
// log.

// exampleBinary builds examples/summarize_repo once per test binary.
var exampleBinary = struct {
	path string
	err  error
	done bool
}{}

func buildExample(t *testing.T) string {
	t.Helper()
	if exampleBinary.done {
		require.NoError(t, exampleBinary.err)
		return exampleBinary.path
	}
	exampleBinary.done = true
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "mcpcall-example-")
	require.NoError(t, err)
	exampleBinary.path = filepath.Join(dir, "summarize_repo")
	cmd := exec.Command(goBin, "build", "-o", exampleBinary.path, "./examples/summarize_repo")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		exampleBinary.err = err
		t.Fatalf("building examples/summarize_repo: %v\n%s", err, out)
	}
	return exampleBinary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if exampleBinary.path != "" {
		os.RemoveAll(filepath.Dir(exampleBinary.path))
	}
	os.Exit(code)
}

// startExample runs the example server on dir and returns its URL.
func startExample(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	bin := buildExample(t)
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"-addr", "127.0.0.1:0", "-dir", dir}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "MRTRKIT_STATE_KEYS=") // a fresh key, with its warning
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	urlRE := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		require.True(t, ok, "the example server exited before serving")
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the example server did not start within 30s")
	}
	return ""
}

// exampleRepo is a small directory for the example to summarise.
func exampleRepo(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"README.md":      "# greeter\n\nA tiny program that greets people.\n",
		"go.mod":         "module example.com/greeter\n\ngo 1.26\n",
		"main.go":        "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
		"docs/design.md": "The greeter prints one line.\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// TestSummarizeRepoEndToEnd completes the example's tool with the CLI:
// pick_files and summary answered from a sampling answers file that
// passes the example's checks (a JSON array of one to three listed
// paths; a non-empty summary).
func TestSummarizeRepoEndToEnd(t *testing.T) {
	url := startExample(t, exampleRepo(t))
	const summary = "greeter is a tiny Go program that prints a greeting; README.md explains it and main.go holds it."
	answers := writeFile(t, "sampling.json", `{
		"pick_files": "[\"README.md\", \"main.go\"]",
		"summary": {"role": "assistant", "model": "example-model", "stopReason": "endTurn",
		            "content": {"type": "text", "text": "`+summary+`"}}
	}`)

	r := runCLI(t, "-url", url, "discover")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "server:       summarize-repo ")
	assert.Contains(t, r.stdout, "versions:     2026-07-28, 2025-11-25, 2025-06-18")

	r = runCLI(t, "-url", url, "tools", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "summarize_repo — Summarise a repository")
	assert.Contains(t, r.stdout, "audience (string, required)")

	r = runCLI(t, "-url", url, "tools", "call", "summarize_repo", "--args", `{"audience":"developer"}`, "--sampling-answers", answers)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, want := range []string{
		"── round 1: the server needs input (1 request) ──",
		"[pick_files] sampling/createMessage (maxTokens 400)",
		"system: You select files from a list.",
		"user: Choose the 3 files of this repository",
		`→ answered from --sampling-answers: assistant (model mcpcall-answers, endTurn): ["README.md", "main.go"]`,
		"── round 2: the server needs input (1 request) ──",
		"[summary] sampling/createMessage (maxTokens 1200)",
		"===== README.md =====",
		"── result (after 2 rounds) ──\n" + summary + "\nstructuredContent:\n",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Empty(t, r.stderr)

	// The same, machine-readable.
	r = runCLI(t, "-url", url, "-json", "tools", "call", "summarize_repo", "--args", `{"audience":"developer"}`, "--sampling-answers", answers)
	require.Equal(t, 0, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 3)
	var res struct {
		ResultType        string `json:"resultType"`
		StructuredContent struct {
			Files   []string `json:"files"`
			Summary string   `json:"summary"`
		} `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(lines[2]["result"], &res))
	assert.Equal(t, "complete", res.ResultType)
	assert.Equal(t, []string{"README.md", "main.go"}, res.StructuredContent.Files)
	assert.Equal(t, summary, res.StructuredContent.Summary)

	// Without sampling answers the server refuses with -32021, and mcpcall
	// says which flag supplies the capability.
	r = runCLI(t, "-url", url, "tools", "call", "summarize_repo", "--args", `{"audience":"developer"}`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "JSON-RPC error -32021")
	assert.Contains(t, r.stderr, "sampling: give --sampling-answers FILE or --model-url URL")

	// An answer the example refuses is a JSON-RPC error (-32602), exit 1.
	bad := writeFile(t, "bad.json", `{"pick_files": "Sure! Here are the files: README.md"}`)
	r = runCLI(t, "-url", url, "tools", "call", "summarize_repo", "--args", `{"audience":"developer"}`, "--sampling-answers", bad)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "JSON-RPC error -32602: Invalid answer to pick_files: not a JSON array")

	// A bad audience is an isError result the model could fix: exit 1.
	r = runCLI(t, "-url", url, "tools", "call", "summarize_repo", "--args", `{"audience":"  "}`, "--sampling-answers", answers)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "error result (isError: true):")
}

// TestSummarizeRepoCritique runs the example's three-round variant.
func TestSummarizeRepoCritique(t *testing.T) {
	url := startExample(t, exampleRepo(t), "-critique")
	answers := writeFile(t, "sampling.json", `{
		"pick_files": "[\"go.mod\", \"README.md\", \"docs/design.md\"]",
		"summary": "A greeter.",
		"critique": "greeter: a tiny Go program that prints one greeting line."
	}`)
	r := runCLI(t, "-url", url, "-json", "tools", "call", "summarize_repo", "--args", `{"audience":"product manager"}`, "--sampling-answers", answers)
	require.Equal(t, 0, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 4)
	for i, key := range []string{"pick_files", "summary", "critique"} {
		assert.True(t, strings.Contains(string(lines[i]["inputRequests"]), `"`+key+`"`), "round %d asks %s", i+1, key)
	}
	assert.Contains(t, string(lines[3]["result"]), `"summary":"greeter: a tiny Go program that prints one greeting line."`)
	assert.Contains(t, string(lines[3]["result"]), `"files":["go.mod","README.md","docs/design.md"]`)
}
