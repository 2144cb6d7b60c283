package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testTree lays out a directory with every kind of entry the lister must
// keep or skip, and a sibling directory outside it. It returns the root.
func testTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	write("README.md", []byte("# Demo\n\nA demo repository.\n"))
	write("main.go", []byte("package main\n\nfunc main() {}\n"))
	write("sub/a.txt", []byte("alpha\n"))
	write("sub/deeper/b.txt", []byte("beta\n"))
	write(".git/config", []byte("[core]\n"))
	write(".hg/store", []byte("x\n"))
	write(".svn/entries", []byte("x\n"))
	write("node_modules/pkg/index.js", []byte("module.exports = 1\n"))
	write("lib/node_modules/x.js", []byte("nested node_modules too\n"))
	write("bin.dat", []byte("ELF\x00\x01\x02"))
	write("latin1.txt", []byte("caf\xe9 au lait\n"))
	write("big.txt", []byte(strings.Repeat("x", 4096)))
	// 1023 ASCII bytes then a 3-byte character cut by the 1 KiB sniff.
	write("cut.txt", []byte(strings.Repeat("a", 1023)+"€ and more text\n"))
	write("empty.txt", nil)
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	links := map[string]string{
		"link-inside":      "README.md",
		"link-abs-inside":  filepath.Join(root, "sub", "a.txt"),
		"link-outside":     filepath.Join("..", "outside", "secret.txt"),
		"link-abs-outside": filepath.Join(outside, "secret.txt"),
		"dirlink":          "sub",
		"dirlink-out":      filepath.Join("..", "outside"),
		"link-git":         filepath.Join(".git", "config"),
		"link-dangling":    "nowhere.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			unavailable(t, "symlinks unavailable: %v", err)
		}
	}
	return root
}

func openTestRepo(t *testing.T, root string, l Limits) *Repo {
	t.Helper()
	if l.MaxFileSize == 0 {
		l.MaxFileSize = 2048
	}
	r, err := OpenRepo(root, l)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func TestListKeepsOnlyEligibleFiles(t *testing.T) {
	r := openTestRepo(t, testTree(t), Limits{})
	l, err := r.List()
	require.NoError(t, err)
	want := []string{
		"README.md",
		"cut.txt",
		"empty.txt",
		"link-abs-inside",
		"link-inside",
		"main.go",
		"sub/a.txt",
		"sub/deeper/b.txt",
	}
	require.Truef(t, slices.Equal(l.Paths, want), "listing\n got %q\nwant %q", l.Paths, want)
	require.False(t, l.Truncated, "listing marked truncated")
}

func TestListIsDeterministic(t *testing.T) {
	root := testTree(t)
	r := openTestRepo(t, root, Limits{})
	a, err := r.List()
	require.NoError(t, err)
	b, err := r.List()
	require.NoError(t, err)
	require.False(t, a.Digest() != b.Digest() || !slices.Equal(a.Paths, b.Paths), "two listings of the same tree differ")
	require.NoError(t, os.WriteFile(filepath.Join(root, "new.txt"), []byte("new\n"), 0o644))
	c, err := r.List()
	require.NoError(t, err)
	require.False(t, c.Digest() == a.Digest(), "digest did not change with the listing")
}

func TestListBounds(t *testing.T) {
	root := testTree(t)
	l, err := openTestRepo(t, root, Limits{MaxFiles: 2}).List()
	require.NoError(t, err)
	require.Falsef(t, !slices.Equal(l.Paths, []string{"README.md", "cut.txt"}) || !l.Truncated, "MaxFiles 2: got %q truncated=%v", l.Paths, l.Truncated)
	full, _ := openTestRepo(t, root, Limits{}).List()
	require.False(t, full.Digest() == l.Digest(), "truncated and full listings share a digest")
	l, err = openTestRepo(t, root, Limits{MaxEntries: 3}).List()
	require.NoError(t, err)
	require.Falsef(t, !l.Truncated || len(l.Paths) > 3, "MaxEntries 3: got %q truncated=%v", l.Paths, l.Truncated)
}

func TestListPutsShallowFilesFirst(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/deep/x.txt", "a/y.txt", "b.txt", "Z.md"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(p), 0o644))
	}
	l, err := openTestRepo(t, root, Limits{}).List()
	require.NoError(t, err)
	if want := []string{"Z.md", "b.txt", "a/y.txt", "a/deep/x.txt"}; !slices.Equal(l.Paths, want) {
		require.FailNow(t, fmt.Sprintf("got %q, want %q", l.Paths, want))
	}
	l, err = openTestRepo(t, root, Limits{MaxFiles: 3}).List()
	require.NoError(t, err)
	if want := []string{"Z.md", "b.txt", "a/y.txt"}; !slices.Equal(l.Paths, want) || !l.Truncated {
		require.FailNow(t, fmt.Sprintf("MaxFiles 3: got %q truncated=%v", l.Paths, l.Truncated))
	}
}

func TestReadRefusesUnsafePaths(t *testing.T) {
	r := openTestRepo(t, testTree(t), Limits{})
	cases := []struct {
		path string
		want error
	}{
		{"", ErrInvalidPath},
		{".", ErrInvalidPath},
		{"../outside/secret.txt", ErrInvalidPath},
		{"sub/../README.md", ErrInvalidPath},
		{"sub/../../outside/secret.txt", ErrInvalidPath},
		{"./README.md", ErrInvalidPath},
		{"sub//a.txt", ErrInvalidPath},
		{"sub/a.txt/", ErrInvalidPath},
		{"/etc/passwd", ErrInvalidPath},
		{filepath.Join(r.Dir(), "README.md"), ErrInvalidPath},
		{`sub\a.txt`, ErrInvalidPath},
		{"README.md\x00", ErrInvalidPath},
		{"bad\nname", ErrInvalidPath},
		{"c1\u0085name", ErrInvalidPath},
		{"line\u2028name", ErrInvalidPath},
		{"para\u2029name", ErrInvalidPath},
		{"caf\xe9", ErrInvalidPath},
		{"link-outside", ErrOutsideRoot},
		{"link-abs-outside", ErrOutsideRoot},
		{"dirlink-out/secret.txt", ErrOutsideRoot},
		{".git/config", ErrNotEligible},
		{"link-git", ErrNotEligible},
		{"lib/node_modules/x.js", ErrNotEligible},
		{"bin.dat", ErrNotEligible},
		{"latin1.txt", ErrNotEligible},
		{"big.txt", ErrNotEligible},
		{"sub", ErrNotEligible},
		{"dirlink", ErrNotEligible},
		{"missing.txt", ErrNotEligible},
		{"link-dangling", ErrNotEligible},
	}
	for _, c := range cases {
		_, err := r.Read(c.path, 100)
		assert.ErrorIsf(t, err, c.want, "Read(%q) = %v, want %v", c.path, err, c.want)
		assert.Falsef(t, err != nil && strings.Contains(err.Error(), "secret\n"), "Read(%q) error leaks contents", c.path)
	}
}

func TestReadFollowsLinksInsideRoot(t *testing.T) {
	r := openTestRepo(t, testTree(t), Limits{})
	for path, want := range map[string]string{
		"link-inside":     "# Demo\n\nA demo repository.\n",
		"link-abs-inside": "alpha\n",
		"dirlink/a.txt":   "alpha\n",
		"empty.txt":       "",
	} {
		f, err := r.Read(path, 1000)
		require.NoErrorf(t, err, "Read(%q)", path)
		require.Falsef(t, f.Text != want || f.Truncated || f.Path != path, "Read(%q) = %+v", path, f)
	}
}

func TestReadCaps(t *testing.T) {
	root := testTree(t)
	r := openTestRepo(t, root, Limits{})
	f, err := r.Read("README.md", 6)
	require.NoError(t, err)
	require.Falsef(t, f.Text != "# Demo" || !f.Truncated, "Read with cap 6 = %+v", f)
	// A cap that falls inside "€" drops the partial character.
	f, err = r.Read("cut.txt", 1024)
	require.NoError(t, err)
	require.Falsef(t, f.Text != strings.Repeat("a", 1023) || !f.Truncated, "cut at a character boundary: len %d truncated %v", len(f.Text), f.Truncated)

	r = openTestRepo(t, root, Limits{MaxReadBytes: 10, MaxTotalBytes: 14})
	files, err := r.ReadAll([]string{"README.md", "main.go", "sub/a.txt"})
	require.NoError(t, err)
	got := []File{
		{Path: "README.md", Text: "# Demo\n\nA ", Truncated: true},
		{Path: "main.go", Text: "pack", Truncated: true},
		{Path: "sub/a.txt", Text: "", Truncated: true},
	}
	require.Truef(t, slices.Equal(files, got), "ReadAll\n got %+v\nwant %+v", files, got)
	if _, err := r.ReadAll([]string{"README.md", "../outside/secret.txt"}); !errors.Is(err, ErrInvalidPath) {
		require.FailNow(t, fmt.Sprintf("ReadAll with a traversal: %v", err))
	}
}

func TestOpenRepoThroughSymlinkedDir(t *testing.T) {
	root := testTree(t)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(root, alias); err != nil {
		unavailable(t, "symlink: %v", err)
	}
	r := openTestRepo(t, alias, Limits{})
	if _, err := r.Read("README.md", 100); err != nil {
		require.FailNow(t, fmt.Sprint(err))
	}
	if _, err := r.Read("link-outside", 100); !errors.Is(err, ErrOutsideRoot) {
		require.FailNow(t, fmt.Sprintf("link-outside through an aliased root: %v", err))
	}
}

func TestIsBinary(t *testing.T) {
	cases := []struct {
		head []byte
		full bool
		want bool
	}{
		{[]byte("plain text"), false, false},
		{[]byte("nul\x00"), false, true},
		{[]byte("\xff\xfe"), false, true},
		{[]byte("cut \xe2\x82"), true, false},
		{[]byte("cut \xe2\x82"), false, true},
		{[]byte("\xe2\x82\xac"), true, false},
		{nil, false, false},
	}
	for _, c := range cases {
		if got := isBinary(c.head, c.full); got != c.want {
			assert.Fail(t, fmt.Sprintf("isBinary(%q, %v) = %v", c.head, c.full, got))
		}
	}
}

// One directory larger than MaxEntries stops the walk without leaving a
// readdir-order-dependent part of it in the listing: the listing holds the
// directories read in full (the top level here) and nothing of the big
// one, the same on every call.
func TestListStopsAtAHugeDirectory(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(rel+"\n"), 0o644))
	}
	write("README.md")
	write("z.txt")
	write("a/small.txt")
	for i := range 1500 {
		write(fmt.Sprintf("big/f%04d.txt", i))
	}
	r := openTestRepo(t, root, Limits{MaxEntries: 1000})
	l, err := r.List()
	require.NoError(t, err)
	if want := []string{"README.md", "z.txt", "a/small.txt"}; !slices.Equal(l.Paths, want) || !l.Truncated {
		require.FailNow(t, fmt.Sprintf("got %d paths %q... truncated=%v, want %q truncated", len(l.Paths), l.Paths[:min(len(l.Paths), 5)], l.Truncated, want))
	}
	again, err := r.List()
	require.Falsef(t, err != nil || again.Digest() != l.Digest(), "second listing differs: %q %v", again.Paths, err)
	// With room for it, the big directory is listed in full.
	l, err = openTestRepo(t, root, Limits{MaxEntries: 1505, MaxFiles: 2000}).List()
	require.NoError(t, err)
	if len(l.Paths) != 1503 || l.Truncated || l.Paths[3] != "big/f0000.txt" {
		require.FailNow(t, fmt.Sprintf("got %d paths truncated=%v, first deep %q", len(l.Paths), l.Truncated, l.Paths[3]))
	}
}

// A name holding a C1 control or a Unicode line or paragraph separator
// never reaches the listing (and so the prompt), and is refused as a path.
func TestUnicodeControlsInNames(t *testing.T) {
	root := t.TempDir()
	bad := []string{"nel\u0085x.txt", "csi\u009bx.txt", "line\u2028sep.txt", "para\u2029sep.txt", "sub/del\u007fx.txt"}
	for _, p := range append([]string{"ok.txt", "sub/caf\u00e9.txt"}, bad...) {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if err := os.WriteFile(full, []byte("text\n"), 0o644); err != nil {
			unavailable(t, "file name %q: %v", p, err)
		}
	}
	r := openTestRepo(t, root, Limits{})
	l, err := r.List()
	require.NoError(t, err)
	if want := []string{"ok.txt", "sub/caf\u00e9.txt"}; !slices.Equal(l.Paths, want) {
		require.FailNow(t, fmt.Sprintf("listing %q, want %q", l.Paths, want))
	}
	for _, p := range bad {
		if _, err := r.Read(p, 100); !errors.Is(err, ErrInvalidPath) {
			assert.Fail(t, fmt.Sprintf("Read(%q) = %v, want ErrInvalidPath", p, err))
		}
	}
}

// Every listed file can be read: the text check covers at least what Read
// passes on, so a NUL past the first KiB keeps a file out of the listing
// rather than failing the call that picked it.
func TestListedFilesAreReadable(t *testing.T) {
	root := testTree(t)
	for name, data := range map[string]string{
		"late-nul.txt":     strings.Repeat("a", 2000) + "\x00tail\n",
		"late-invalid.txt": strings.Repeat("a", 3000) + "\xff\n",
		// Exactly the sniff length, ending inside a character.
		"edge.txt": strings.Repeat("a", DefaultMaxReadBytes-2) + "\xe2\x82",
		// Invalid only past what the model is shown: listed, and readable.
		"far.txt": strings.Repeat("a", DefaultMaxReadBytes+10) + "\x00\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(data), 0o644))
	}
	r := openTestRepo(t, root, Limits{MaxFileSize: 64 << 10})
	l, err := r.List()
	require.NoError(t, err)
	for _, p := range []string{"late-nul.txt", "late-invalid.txt", "edge.txt"} {
		assert.Falsef(t, l.Contains(p), "%s is listed", p)
	}
	assert.Truef(t, l.Contains("far.txt"), "far.txt is not listed: %q", l.Paths)
	for _, p := range l.Paths {
		if _, err := r.Read(p, r.Limits().MaxReadBytes); err != nil {
			assert.Fail(t, fmt.Sprintf("listed %s cannot be read: %v", p, err))
		}
	}
}
