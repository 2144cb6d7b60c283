package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBlock is one fenced bash block of README.md with its replay marker
// <!-- replay TAG NAME -->.
type readmeBlock struct {
	Tag, Name, Code string
}

var (
	replayMarker = regexp.MustCompile(`^<!-- replay (\S+)(?: (\S+))? -->$`)
	fenceOpen    = regexp.MustCompile("^```(\\S*)\\s*$")
)

// readmeBlocks parses README.md. Every bash block must carry a replay
// marker on the line before it, so that nothing a reader runs goes
// unchecked; blocks of other languages are not run.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		require.Falsef(t, i == len(lines), "README.md:%d: unterminated code block", start+1)
		if m[1] != "bash" {
			continue
		}
		var mk []string
		if start > 0 {
			mk = replayMarker.FindStringSubmatch(lines[start-1])
		}
		require.Falsef(t, mk == nil, "README.md:%d: bash block without a <!-- replay TAG NAME --> marker", start+1)
		blocks = append(blocks, readmeBlock{Tag: mk[1], Name: mk[2], Code: strings.Join(lines[start+1:i], "\n")})
	}
	return blocks
}

// replay runs the blocks with the given tags, in README order, in one bash
// process against url, and returns each named block's output.
func replay(t *testing.T, url string, blocks []readmeBlock, tags ...string) map[string]string {
	t.Helper()
	return replayIn(t, "", []string{"MCP_URL=" + url}, blocks, tags...)
}

// replayIn runs the blocks with the given tags, in README order, in one
// bash process in dir ("" for the package's) with env added to the
// environment, and returns each named block's standard output.
func replayIn(t *testing.T, dir string, env []string, blocks []readmeBlock, tags ...string) map[string]string {
	t.Helper()
	var script strings.Builder
	var names []string
	for _, b := range blocks {
		if !slices.Contains(tags, b.Tag) {
			continue
		}
		if b.Name != "" {
			names = append(names, b.Name)
			script.WriteString("printf '\\n@@@ %s\\n' '" + b.Name + "'\n")
		}
		script.WriteString(b.Code)
		script.WriteString("\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-s")
	cmd.Stdin = strings.NewReader(script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		require.FailNow(t, fmt.Sprintf("replaying README.md: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String()))
	}
	out := map[string]string{}
	parts := strings.Split(stdout.String(), "\n@@@ ")
	for _, p := range parts[1:] {
		name, body, _ := strings.Cut(p, "\n")
		out[name] = body
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			require.FailNow(t, fmt.Sprintf("no output section for block %q:\n%s", n, stdout.String()))
		}
	}
	return out
}

// jsonIn decodes the one JSON-RPC message in a block's output (a plain
// JSON body or an SSE "data:" line).
func jsonIn(t *testing.T, name, out string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var v map[string]any
		require.NoErrorf(t, json.Unmarshal([]byte(line), &v), "block %s: bad JSON %q", name, line)
		found = append(found, v)
	}
	require.Lenf(t, found, 1, "block %s: want one JSON message, got %d in:\n%s", name, len(found), out)
	return found[0]
}

// field walks a decoded JSON value by keys.
func field(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// repoRoot is the root of the module, two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		require.FailNow(t, fmt.Sprintf("repository root not found: %v", err))
	}
	return root
}

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			// In CI a skip would let the README drift unnoticed.
			unavailable(t, "the README walkthrough needs %s, which is not installed", tool)
		}
	}
}

// readmePick is what the README's model chooses in round 2.
var readmePick = []string{"go.mod", "mrtr/doc.go", "examples/summarize_repo/README.md"}

// checkMain asserts the outputs of the main walkthrough up to round 2 and
// the refusals; round 3 depends on the mode and is checked by the caller.
func checkMain(t *testing.T, out map[string]string) {
	t.Helper()
	d := jsonIn(t, "discover", out["discover"])
	assert.Falsef(t, field(d, "result", "resultType") != "complete" || field(d, "result", "ttlMs") == nil || field(d, "result", "cacheScope") != "public", "discover: %v", d)
	l := jsonIn(t, "tools-list", out["tools-list"])
	tools, _ := field(l, "result", "tools").([]any)
	assert.Falsef(t, field(l, "result", "resultType") != "complete" || len(tools) != 1 || field(tools[0], "name") != ToolName || field(l, "result", "ttlMs") == nil, "tools/list: %v", l)
	for name, key := range map[string]string{"round-1": KeyPickFiles, "round-2": KeySummary} {
		r := jsonIn(t, name, out[name])
		assert.Falsef(t, field(r, "result", "resultType") != "input_required" || field(r, "result", "inputRequests", key, "method") != "sampling/createMessage", "%s: want input_required asking %s, got %v", name, key, r)
	}
	e := jsonIn(t, "no-sampling", out["no-sampling"])
	if field(e, "error", "code") != float64(-32021) || field(e, "error", "data", "requiredCapabilities", "sampling") == nil ||
		!strings.Contains(out["no-sampling"], "HTTP 400") {
		assert.Fail(t, fmt.Sprintf("no-sampling: %s", out["no-sampling"]))
	}
	e = jsonIn(t, "changed-arguments", out["changed-arguments"])
	if field(e, "error", "code") != float64(-32602) || field(e, "error", "data", "reason") != "invalid_request_state" {
		assert.Fail(t, fmt.Sprintf("changed-arguments: %s", out["changed-arguments"]))
	}
	if strings.TrimSpace(out["notification"]) != "HTTP 202" {
		assert.Fail(t, fmt.Sprintf("notification: %q", out["notification"]))
	}
}

// checkComplete asserts a complete result whose files are the README's pick.
func checkComplete(t *testing.T, name, out string) {
	t.Helper()
	r := jsonIn(t, name, out)
	require.EqualValuesf(t, "complete", field(r, "result", "resultType"), "%s: want complete, got %v", name, r)
	files, _ := field(r, "result", "structuredContent", "files").([]any)
	var got []string
	for _, f := range files {
		s, _ := f.(string)
		got = append(got, s)
	}
	summary, _ := field(r, "result", "structuredContent", "summary").(string)
	content, _ := field(r, "result", "content").([]any)
	require.Falsef(t, !slices.Equal(got, readmePick) || summary == "" || len(content) != 1 || field(content[0], "text") != summary, "%s: result %v", name, r)
}

// TestREADME replays the README's walkthrough against the server
// summarising this repository: the sampling flow, then the same with
// -critique. TestREADMEDirectModel replays the direct-model block, and
// TestREADMEStdio (stdio_test.go) the pipe blocks of the stdio section.
func TestREADME(t *testing.T) {
	needTools(t)
	blocks := readmeBlocks(t)
	root := repoRoot(t)

	t.Run("sampling", func(t *testing.T) {
		s := startServer(t, Config{Dir: root, Limits: Limits{MaxFileSize: DefaultMaxFileSize}}, nil)
		out := replay(t, s.url, blocks, "setup", "main")
		checkMain(t, out)
		checkComplete(t, "round-3", out["round-3"])
	})
	t.Run("critique", func(t *testing.T) {
		s := startServer(t, Config{Dir: root, Critique: true, Limits: Limits{MaxFileSize: DefaultMaxFileSize}}, nil)
		out := replay(t, s.url, blocks, "setup", "main", "critique")
		checkMain(t, out)
		r := jsonIn(t, "round-3", out["round-3"])
		require.EqualValuesf(t, "sampling/createMessage", field(r, "result", "inputRequests", KeyCritique, "method"), "round-3 with -critique: %v", r)
		checkComplete(t, "round-4", out["round-4"])
	})
}

// TestREADMEDirectModel replays the README's direct-model call against the
// server in direct-model mode, its model an imitation of the
// chat-completions API that picks the README's files.
func TestREADMEDirectModel(t *testing.T) {
	needTools(t)
	blocks := readmeBlocks(t)
	pick, _ := json.Marshal(readmePick)
	fake := &fakeChat{pick: string(pick), summary: "A Go framework for stateless MCP servers."}
	s, _ := startDirect(t, fake, Config{Dir: repoRoot(t), Limits: Limits{MaxFileSize: DefaultMaxFileSize}}, testAPIKey)
	out := replay(t, s.url, blocks, "setup", "direct")
	checkComplete(t, "direct-call", out["direct-call"])
	if n := len(fake.sent()); n != 2 {
		require.FailNow(t, fmt.Sprintf("the model was asked %d times", n))
	}
}

// TestREADMEBlocksAreAllReplayed guards the marker scheme: every tag the
// README uses is one a replay covers.
func TestREADMEBlocksAreAllReplayed(t *testing.T) {
	known := []string{"setup", "main", "critique", "direct", "stdio"}
	names := map[string]bool{}
	for _, b := range readmeBlocks(t) {
		assert.Truef(t, slices.Contains(known, b.Tag), "block %q has tag %q, which no replay runs", b.Name, b.Tag)
		assert.Falsef(t, b.Tag != "setup" && b.Name == "", "a %s block has no name", b.Tag)
		assert.Falsef(t, names[b.Name], "two blocks are named %q", b.Name)
		names[b.Name] = true
	}
	for _, n := range []string{"discover", "tools-list", "round-1", "round-2", "round-3", "round-4", "no-sampling", "changed-arguments", "notification", "direct-call",
		"stdio-discover", "stdio-round-1", "stdio-round-2"} {
		assert.Truef(t, names[n], "README.md has no block %q", n)
	}
}

// TestREADMEListingExample checks the listing shown in the README's
// illustrative pick_files answer against the listing of this repository:
// its first lines, in order.
func TestREADMEListingExample(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`Files:((?:\\n[^\\"]+)+)\\n\.\.\."`).FindSubmatch(b)
	require.False(t, m == nil, `README.md: no example listing ("Files:\n...\n...") found`)
	shown := strings.Split(strings.TrimPrefix(string(m[1]), `\n`), `\n`)
	r, err := OpenRepo(repoRoot(t), Limits{MaxFileSize: DefaultMaxFileSize})
	require.NoError(t, err)
	defer r.Close()
	l, err := r.List()
	require.NoError(t, err)
	// The shown paths must appear in the listing in the same order; other
	// files may sit between them (a working tree can hold untracked ones).
	at := 0
	for _, p := range l.Paths {
		if at < len(shown) && p == shown[at] {
			at++
		}
	}
	if at < len(shown) {
		require.FailNow(t, fmt.Sprintf("README.md shows the listing as %q; the listing holds %q in another order, or not at all", shown, shown[at]))
	}
}
