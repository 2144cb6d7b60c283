package streamablehttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGolden replays every case under testdata/golden against the test
// server (see newTestServer) over real HTTP. testdata/golden/README.md
// describes the file format; a new protocol rule is a new file.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	f := newFixture(t)
	total := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		cases, err := parseGolden(string(src))
		require.NoError(t, err, file)
		require.NotEmpty(t, cases, "%s holds no cases", file)
		total += len(cases)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			for i, gc := range cases {
				name := gc.name
				if name == "" {
					name = strconv.Itoa(i + 1)
				}
				t.Run(name, func(t *testing.T) { gc.run(t, f) })
			}
		})
	}
	t.Logf("%d golden cases in %d files", total, len(files))
}

// goldenCase is one request and the response it must get.
type goldenCase struct {
	name        string
	req         call
	status      int
	wantHeaders [][2]string
	wantBody    string
}

func (gc goldenCase) run(t *testing.T, f *fixture) {
	resp, body := f.do(t, gc.req)
	assert.Equal(t, gc.status, resp.StatusCode, "status; body: %s", body)
	for _, h := range gc.wantHeaders {
		got, present := resp.Header[http.CanonicalHeaderKey(h[0])]
		if h[1] == "<absent>" {
			assert.False(t, present, "header %s must be absent, is %q", h[0], got)
			continue
		}
		assert.Equal(t, h[1], strings.Join(got, ", "), "header %s", h[0])
	}
	if gc.wantBody == "" {
		assert.Empty(t, string(body), "body")
		return
	}
	want, err := decodeJSONNumbers([]byte(gc.wantBody))
	require.NoError(t, err, "expected body is not JSON: %s", gc.wantBody)
	got, err := decodeJSONNumbers(body)
	require.NoError(t, err, "response body is not JSON: %s", body)
	if problems := matchJSON("$", want, got, nil); len(problems) > 0 {
		t.Errorf("body %s\ndoes not match %s:\n  %s", body, gc.wantBody, strings.Join(problems, "\n  "))
	}
}

func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// matchJSON compares got with want exactly, except that the string
// "<any>" in want matches any value and "<absent>" requires the member to
// be missing. It returns every difference, by JSON path.
func matchJSON(path string, want, got any, problems []string) []string {
	if s, ok := want.(string); ok && s == "<any>" {
		return problems
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return append(problems, fmt.Sprintf("%s: want an object, got %v", path, got))
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			wv, inWant := w[k]
			gv, inGot := g[k]
			p := path + "." + k
			switch {
			case inWant && wv == "<absent>":
				if inGot {
					problems = append(problems, fmt.Sprintf("%s: want absent, got %v", p, gv))
				}
			case !inWant:
				problems = append(problems, fmt.Sprintf("%s: unexpected member %v", p, gv))
			case !inGot:
				problems = append(problems, fmt.Sprintf("%s: missing", p))
			default:
				problems = matchJSON(p, wv, gv, problems)
			}
		}
		return problems
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return append(problems, fmt.Sprintf("%s: want %d elements, got %v", path, len(w), got))
		}
		for i := range w {
			problems = matchJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], problems)
		}
		return problems
	default:
		if want != got {
			return append(problems, fmt.Sprintf("%s: want %v, got %v", path, want, got))
		}
		return problems
	}
}

// parseGolden reads the cases of one golden file.
func parseGolden(src string) ([]goldenCase, error) {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	type section struct {
		kind, name string
		lines      []string
		at         int
	}
	var sections []section
	for i, line := range lines {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") {
			head := strings.TrimSpace(line[3 : len(line)-3])
			kind, name, _ := strings.Cut(head, ":")
			sections = append(sections, section{kind: strings.TrimSpace(kind), name: strings.TrimSpace(name), at: i + 1})
			continue
		}
		if len(sections) == 0 {
			if line != "" && !strings.HasPrefix(line, "#") {
				return nil, fmt.Errorf("line %d: only # comments may precede the first section", i+1)
			}
			continue
		}
		s := &sections[len(sections)-1]
		s.lines = append(s.lines, line)
	}
	if len(sections)%2 != 0 {
		return nil, fmt.Errorf("sections must come in request/response pairs")
	}
	var cases []goldenCase
	for i := 0; i < len(sections); i += 2 {
		rq, rs := sections[i], sections[i+1]
		if rq.kind != "request" || rs.kind != "response" {
			return nil, fmt.Errorf("line %d: want a request section followed by a response section", rq.at)
		}
		var gc goldenCase
		gc.name = rq.name
		first, headers, body, err := splitMessage(rq.lines)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", rq.at, err)
		}
		method, path, ok := strings.Cut(first, " ")
		if !ok || method == "" || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("line %d: the request line must be \"METHOD /path\", not %q", rq.at, first)
		}
		gc.req = call{method: method, path: path, body: body}
		for _, h := range headers {
			if strings.EqualFold(h[0], "Host") {
				gc.req.host = h[1]
				continue
			}
			gc.req.headers = append(gc.req.headers, h)
		}
		first, gc.wantHeaders, gc.wantBody, err = splitMessage(rs.lines)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", rs.at, err)
		}
		if gc.status, err = strconv.Atoi(first); err != nil {
			return nil, fmt.Errorf("line %d: the response must start with a status code, not %q", rs.at, first)
		}
		cases = append(cases, gc)
	}
	return cases, nil
}

// splitMessage splits an HTTP-like message: a first line, header lines up
// to a blank line, then the body (surrounding blank lines removed).
func splitMessage(lines []string) (first string, headers [][2]string, body string, err error) {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return "", nil, "", fmt.Errorf("empty section")
	}
	first, lines = strings.TrimSpace(lines[0]), lines[1:]
	for len(lines) > 0 && lines[0] != "" {
		name, value, ok := strings.Cut(lines[0], ":")
		if !ok || strings.TrimSpace(name) == "" {
			return "", nil, "", fmt.Errorf("header line %q is not \"Name: value\"", lines[0])
		}
		headers = append(headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
		lines = lines[1:]
	}
	body = strings.TrimSpace(strings.Join(lines, "\n"))
	return first, headers, body, nil
}
