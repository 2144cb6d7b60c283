package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/state"
)

// secretTree is testTree with hidden files and files named like
// credentials added, each holding the word TOPSECRET.
func secretTree(t *testing.T) string {
	t.Helper()
	root := testTree(t)
	for _, rel := range []string{
		".env", ".npmrc", ".netrc", ".ssh/id_rsa", ".ssh/config", "conf/.hidden/x.txt",
		"id_ed25519", "id_ecdsa.pub", "tls/server.pem", "tls/server.KEY", "cert.p12", "cert.pfx",
		"credentials.json", "aws/credentials", "secrets.yaml", "vault.kdbx",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("TOPSECRET=1\n"), 0o644))
	}
	// An innocent name linking to a withheld file.
	if err := os.Symlink(".env", filepath.Join(root, "notes.txt")); err != nil {
		unavailable(t, "symlink: %v", err)
	}
	return root
}

func TestWithheldFilesAreNotListedOrRead(t *testing.T) {
	root := secretTree(t)
	r := openTestRepo(t, root, Limits{})
	l, err := r.List()
	require.NoError(t, err)
	want := []string{
		"README.md", "cut.txt", "empty.txt", "link-abs-inside", "link-inside", "main.go",
		"sub/a.txt", "sub/deeper/b.txt",
	}
	require.Truef(t, slices.Equal(l.Paths, want), "listing\n got %q\nwant %q", l.Paths, want)
	for _, rel := range []string{
		".env", ".npmrc", ".netrc", ".ssh/id_rsa", ".ssh/config", "conf/.hidden/x.txt", "id_ed25519",
		"id_ecdsa.pub", "tls/server.pem", "tls/server.KEY", "cert.p12", "cert.pfx", "credentials.json",
		"aws/credentials", "secrets.yaml", "vault.kdbx", "notes.txt",
	} {
		f, err := r.Read(rel, 100)
		var we *WithheldError
		if !errors.As(err, &we) {
			assert.Fail(t, fmt.Sprintf("Read(%q) = %q, %v; want a *WithheldError", rel, f.Text, err))
			continue
		}
		assert.Falsef(t, strings.Contains(we.Error(), "TOPSECRET"), "Read(%q): error holds the content: %v", rel, err)
	}

	t.Run("include hidden", func(t *testing.T) {
		r, err := OpenRepo(root, Limits{MaxFileSize: 2048}, IncludeHidden())
		require.NoError(t, err)
		defer r.Close()
		l, err := r.List()
		require.NoError(t, err)
		for _, p := range []string{".env", ".ssh/id_rsa", "tls/server.pem", "credentials.json", "notes.txt"} {
			assert.Truef(t, l.Contains(p), "listing with IncludeHidden lacks %q: %q", p, l.Paths)
		}
		// Version-control folders stay skipped.
		for _, p := range l.Paths {
			assert.Falsef(t, strings.HasPrefix(p, ".git/") || strings.HasPrefix(p, ".hg/") || strings.HasPrefix(p, ".svn/"), "listing with IncludeHidden holds %q", p)
		}
		if f, err := r.Read(".env", 100); err != nil || f.Text != "TOPSECRET=1\n" {
			assert.Fail(t, fmt.Sprintf("Read(.env) with IncludeHidden = %q, %v", f.Text, err))
		}
	})
}

func TestWithheldPickIsRefusedByRule(t *testing.T) {
	s := startServer(t, Config{Dir: secretTree(t)}, nil)
	text, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
	require.Falsef(t, strings.Contains(text, ".env") || strings.Contains(text, "id_rsa") || strings.Contains(text, "server.pem"), "the pick_files prompt lists a withheld file:\n%s", text)
	for name, c := range map[string]struct{ pick, rule string }{
		"dotfile":          {`[".env"]`, `rule "dotfile"`},
		"dot directory":    {`["README.md", ".ssh/id_rsa"]`, `entry 1 is withheld by rule "dotfile"`},
		"private key":      {`["id_ed25519"]`, `rule "credential-name" (no name matching "id_ed25519*")`},
		"pem":              {`["tls/server.pem"]`, `"*.pem"`},
		"credentials file": {`["credentials.json"]`, `"credentials*"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(c.pick)}})
			r.wantError(t, -32602, 200)
			assert.Containsf(t, r.Error.Message, c.rule, "message does not name the rule %s: %s", c.rule, r.raw)
			assert.Falsef(t, bytes.Contains(r.raw, []byte("TOPSECRET")), "reply holds the content: %s", r.raw)
		})
	}

	t.Run("include hidden", func(t *testing.T) {
		s := startServer(t, Config{Dir: secretTree(t), IncludeHidden: true}, nil)
		text, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
		require.Containsf(t, text, "\n.env\n", "the pick_files prompt lacks .env with IncludeHidden:\n%s", text)
		text, _, _ = s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(`[".env"]`)}}).asked(t, KeySummary)
		require.Containsf(t, text, "TOPSECRET", "the summary prompt lacks .env's content with IncludeHidden:\n%s", text)
	})
}

func TestChosenFileSwappedForAWithheldOneIsRefusedByRule(t *testing.T) {
	root := secretTree(t)
	s := startServer(t, Config{Dir: root}, nil)
	_, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
	_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(`["main.go"]`)}}).asked(t, KeySummary)
	// Between rounds main.go becomes a link to .env.
	p := filepath.Join(root, "main.go")
	require.NoError(t, os.Remove(p))
	if err := os.Symlink(".env", p); err != nil {
		unavailable(t, "symlink: %v", err)
	}
	// The summary round is asked again (no answer given): the file is
	// read once more, and refused.
	r := s.call(toolCall{State: st})
	r.wantError(t, -32602, 200)
	require.Falsef(t, !strings.Contains(r.Error.Message, `withheld by rule "dotfile"`) || bytes.Contains(r.raw, []byte("TOPSECRET")), "reply: %s", r.raw)
}

// swapOnce makes r's next open of name swap the file first, by calling
// swap once.
func swapOnce(r *Repo, name string, swap func()) {
	var once sync.Once
	hook := func(n string) {
		if n == name {
			once.Do(swap)
		}
	}
	r.beforeOpen.Store(&hook)
}

func TestSwapBetweenCheckAndOpenIsRefused(t *testing.T) {
	for name, swap := range map[string]func(t *testing.T, root string){
		"link to .git/config": func(t *testing.T, root string) {
			p := filepath.Join(root, "main.go")
			assert.NoError(t, os.Remove(p))
			assert.NoError(t, os.Symlink(filepath.Join(".git", "config"), p))
		},
		"another file renamed over it": func(t *testing.T, root string) {
			other := filepath.Join(root, "other")
			assert.NoError(t, os.WriteFile(other, []byte("[core]\n"), 0o644))
			assert.NoError(t, os.Rename(other, filepath.Join(root, "main.go")))
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := testTree(t)
			r := openTestRepo(t, root, Limits{})
			swapOnce(r, "main.go", func() { swap(t, root) })
			f, err := r.Read("main.go", 100)
			require.Falsef(t, !errors.Is(err, ErrNotEligible) || !strings.Contains(err.Error(), "changed between its check and its open"), "Read after a swap = %q, %v; want ErrNotEligible", f.Text, err)
			// Read again, without a swap, it is the file now there.
			if _, err := r.Read("main.go", 100); err == nil && name == "link to .git/config" {
				require.FailNow(t, "main.go, now a link into .git, was read")
			}
		})
	}

	t.Run("on the wire", func(t *testing.T) {
		root := testTree(t)
		s := startServer(t, Config{Dir: root, Critique: true}, nil)
		_, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
		_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(`["README.md", "main.go"]`)}}).asked(t, KeySummary)
		// The critique round reads main.go again; it is swapped for a link
		// to .git/config between that read's check and its open.
		swapOnce(s.app.repo, "main.go", func() {
			p := filepath.Join(root, "main.go")
			assert.NoError(t, os.Remove(p))
			assert.NoError(t, os.Symlink(filepath.Join(".git", "config"), p))
		})
		r := s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer("Draft.")}})
		r.wantError(t, -32602, 200)
		require.Falsef(t, !strings.Contains(r.Error.Message, "changed") || bytes.Contains(r.raw, []byte("[core]")), "reply: %s", r.raw)
	})
}

func TestSummaryBoundInState(t *testing.T) {
	pick := map[string]any{KeyPickFiles: answer(`["README.md"]`)}
	start := func(t *testing.T) (*testServer, string) {
		s := startServer(t, Config{Dir: smallRepo(t), Critique: true}, nil)
		_, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
		_, _, st = s.call(toolCall{State: st, Answers: pick}).asked(t, KeySummary)
		return s, st
	}

	t.Run("8 KiB of < is refused as too long", func(t *testing.T) {
		s, st := start(t)
		r := s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer(strings.Repeat("<", 8<<10))}})
		r.wantError(t, -32602, 200)
		want := fmt.Sprintf("summary too long: %d bytes encoded, limit %d", 6*(8<<10), maxSummaryBytes)
		require.Containsf(t, r.Error.Message, want, "message lacks %q: %s", want, r.raw)
	})
	t.Run("a summary at the limit is sealed and returned as given", func(t *testing.T) {
		s, st := start(t)
		// 6 bytes each when escaped (<, >, &), then plain text up to the limit.
		head := "<a & b>"
		summary := head + strings.Repeat("x", maxSummaryBytes-encodedLen(head))
		require.Equalf(t, maxSummaryBytes, encodedLen(summary), "test summary encodes to %d bytes", encodedLen(summary))
		_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer(summary)}}).asked(t, KeyCritique)
		res := s.call(toolCall{State: st, Answers: map[string]any{KeyCritique: answer(summary)}}).complete(t)
		require.Falsef(t, res.StructuredContent == nil || res.StructuredContent.Summary != summary, "structuredContent summary differs: %.80v", res.StructuredContent)
	})
	t.Run("one byte over the limit", func(t *testing.T) {
		s, st := start(t)
		r := s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer("&" + strings.Repeat("x", maxSummaryBytes-5))}})
		r.wantError(t, -32602, 200)
		require.Containsf(t, r.Error.Message, fmt.Sprintf("summary too long: %d bytes encoded", maxSummaryBytes+1), "message: %s", r.raw)
	})
}

func TestRequireKeys(t *testing.T) {
	s, err := parseFlags([]string{"-require-keys", "-include-hidden"}, func(string) string { return "" }, new(bytes.Buffer))
	require.Falsef(t, err != nil || !s.RequireKeys || !s.Config.IncludeHidden, "parseFlags = %+v, %v", s, err)
	s.Config.Dir = smallRepo(t)
	s.Config.Logger = quietLogger()

	t.Setenv(state.EnvKeys, "")
	app, err := newAppFromSettings(s, nil, nil)
	if err == nil {
		app.Close()
		require.FailNow(t, "started without keys under -require-keys")
	}
	require.Containsf(t, err.Error(), state.EnvKeys, "error does not name %s: %v", state.EnvKeys, err)

	t.Setenv(state.EnvKeys, "k1:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	app, err = newAppFromSettings(s, nil, nil)
	require.NoErrorf(t, err, "with %s set", state.EnvKeys)
	app.Close()

	// Without the flag a missing ring is not fatal (a random key is made).
	t.Setenv(state.EnvKeys, "")
	s.RequireKeys = false
	app, err = newAppFromSettings(s, nil, nil)
	require.NoError(t, err, "without -require-keys")
	app.Close()
}
