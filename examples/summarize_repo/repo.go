package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Limits bound what the tool lists and reads. A zero field takes its
// default.
type Limits struct {
	// MaxFiles is how many paths a listing holds at most (default 300).
	MaxFiles int
	// MaxEntries is how many directory entries a listing visits at most,
	// eligible or not (default 20000), so that a tree full of skipped
	// files, or one huge directory, still costs a bounded walk and bounded
	// memory. List says what a listing stopped there holds.
	MaxEntries int
	// MaxFileSize is the size above which a file is not listed (default
	// 512 KiB).
	MaxFileSize int64
	// MaxReadBytes is how many bytes of one file go to the model (default
	// 12 KiB); the rest is cut off.
	MaxReadBytes int
	// MaxTotalBytes is how many bytes of all chosen files go to the model
	// together (default 32 KiB).
	MaxTotalBytes int
}

// Defaults of Limits.
const (
	DefaultMaxFiles      = 300
	DefaultMaxEntries    = 20000
	DefaultMaxFileSize   = 512 << 10
	DefaultMaxReadBytes  = 12 << 10
	DefaultMaxTotalBytes = 32 << 10
)

// sniffSize is how much of a file is inspected, at least, to tell text
// from binary; check inspects MaxReadBytes when that is more.
const sniffSize = 1024

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxReadBytes <= 0 {
		l.MaxReadBytes = DefaultMaxReadBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return l
}

// skippedDirs are directories never listed or read: version-control
// metadata and installed dependencies.
var skippedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true,
	"CVS": true, "node_modules": true,
}

// Errors of path validation and reading. Read wraps one of them, or
// returns a *WithheldError.
var (
	ErrInvalidPath = errors.New("invalid path")
	ErrOutsideRoot = errors.New("path leaves the summarised directory")
	ErrNotEligible = errors.New("file is not eligible")
)

// credentialNames are the names, in path.Match syntax and matched against
// the lower-cased name of every element of a path, that the withholding
// rule keeps from the model besides hidden names: private keys and key
// stores, password databases, cloud and cluster credentials, and files
// that conventionally hold secrets. Hidden names (starting with ".")
// already cover .env, .npmrc, .netrc, .pgpass, .ssh/, .aws/, .kube/,
// .gnupg/ and the like. credentialContent catches, by content, what is
// named otherwise.
var credentialNames = []string{
	// SSH, TLS and other private keys, and key stores.
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*_rsa", "*_dsa", "*_ecdsa", "*_ed25519",
	"*_key", "deploy_key*", "*.ppk",
	"*.pem", "*.key", "*.p8", "*.p12", "*.pfx", "*.pkcs12", "*.jks", "*.jceks", "*.bks", "*.keystore",
	"*.keytab", "*.asc", "*.gpg", "secring.*", "*.kdbx",
	// Credentials and secrets by name.
	"credentials*", "*credentials.json", "secrets.*", "*.secret", "*.secrets", "*.token", "token.json",
	"_netrc", "htpasswd", "*.htpasswd", "shadow", "gshadow", "*.ovpn", "wp-config.php",
	// Cloud service-account keys (also caught by content).
	"*service-account*.json", "*service_account*.json", "*serviceaccount*.json",
	"*-sa.json", "*_sa.json", "*-sa-key*.json",
	// Terraform variables and state, cluster access.
	"*.tfvars", "*.tfvars.json", "*.tfstate", "*.tfstate.*", "kubeconfig*", "*.kubeconfig",
}

// WithheldError refuses a path that the withholding rule keeps from the
// model (see withheldBy). Rule names the rule and never the path.
type WithheldError struct{ Rule string }

func (e *WithheldError) Error() string { return "withheld by rule " + e.Rule }

// withheldBy returns the rule that keeps the slash-separated path p from
// the model by its name, or "" when none does: "dotfile" for an element
// whose name starts with "." (a hidden file or directory),
// "credential-name" for an element matching one of credentialNames.
// check applies credentialContent besides. The "." and ".." elements of
// an unclean path are not names and are left to validRel.
func withheldBy(p string) string {
	for _, part := range strings.Split(p, "/") {
		if part == "." || part == ".." || part == "" {
			continue
		}
		if strings.HasPrefix(part, ".") {
			return `"dotfile" (no name starting with ".")`
		}
		lower := strings.ToLower(part)
		for _, pat := range credentialNames {
			if ok, _ := path.Match(pat, lower); ok {
				return `"credential-name" (no name matching ` + strconv.Quote(pat) + `)`
			}
		}
	}
	return ""
}

// Repo is a read-only view of one directory tree. Every access goes
// through two checks: the path is resolved with filepath.EvalSymlinks and
// must stay inside the root (this admits links to files inside the tree,
// absolute or relative), and the file is then opened through an os.Root,
// which refuses any escape atomically, so a link swapped between the check
// and the open cannot lead outside either. A Repo is safe for concurrent
// use.
type Repo struct {
	dir    string // absolute, symlinks resolved
	root   *os.Root
	limits Limits
	// includeHidden turns the withholding rule off (IncludeHidden).
	includeHidden bool
	// beforeOpen, when set, runs between the check of a file and its
	// open, with the name about to be opened; tests use it to swap files
	// while the Repo serves.
	beforeOpen atomic.Pointer[func(name string)]
}

// RepoOption configures OpenRepo.
type RepoOption func(*Repo)

// IncludeHidden turns off the withholding rule: hidden files and
// directories (names starting with "."), files with the names of
// credentials (credentialNames) and files holding them
// (credentialContent) are then listed and read like any other.
// Version-control and dependency folders stay skipped, and files with
// more than one hard link stay refused.
func IncludeHidden() RepoOption { return func(r *Repo) { r.includeHidden = true } }

// OpenRepo opens dir for listing and reading. Unless IncludeHidden is
// given, hidden files and directories and files with the names of
// credentials are neither listed nor read.
func OpenRepo(dir string, limits Limits, opts ...RepoOption) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	r := &Repo{dir: real, root: root, limits: limits.withDefaults()}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// withheld returns the rule that keeps p from the model, or "" when the
// rule is off or does not apply.
func (r *Repo) withheld(p string) string {
	if r.includeHidden {
		return ""
	}
	return withheldBy(p)
}

// Dir returns the summarised directory, absolute with symlinks resolved.
func (r *Repo) Dir() string { return r.dir }

// Limits returns the limits in force, defaults applied.
func (r *Repo) Limits() Limits { return r.limits }

// Close releases the directory.
func (r *Repo) Close() error { return r.root.Close() }

// Listing is the deterministic list of files the model may choose from:
// slash-separated paths relative to the root, shallow ones first.
type Listing struct {
	Paths []string
	// Truncated is set when MaxFiles or MaxEntries stopped the walk.
	Truncated bool
	// withheld, when set, names the rule that keeps a path from the
	// model (Repo.withheld), so that ParsePick refuses a withheld path
	// by its rule.
	withheld func(string) string
}

// Contains reports whether p is one of the listed paths, exactly.
func (l Listing) Contains(p string) bool { return slices.Contains(l.Paths, p) }

// Digest identifies the listing: equal listings have equal digests. The
// tool carries it from round to round instead of the listing itself.
func (l Listing) Digest() string {
	h := sha256.New()
	for _, p := range l.Paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	if l.Truncated {
		h.Write([]byte("truncated"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// listBatch is how many entries one read of a directory returns at most.
const listBatch = 512

// List walks the tree and returns the eligible files: regular text files
// (or links to them inside the tree) no larger than MaxFileSize, outside
// the skipped directories. Shallow files come first (then lexical order
// within a depth), so that when MaxFiles cuts the list the top-level files
// such as README.md and go.mod are kept. The same tree gives the same
// listing.
//
// The walk is breadth first, a depth at a time, each directory read in
// batches and its subdirectories visited in lexical order. When it reaches
// MaxEntries it stops and the listing is marked truncated: it holds the
// files of the directories read in full before that point, and none of
// the directory being read, since which part of it had been read would
// depend on the order the file system returns entries in. So a truncated
// listing, too, is the same for the same tree, and no more than
// MaxEntries entries are held in memory however large one directory is.
func (r *Repo) List() (Listing, error) {
	l := Listing{withheld: r.withheld}
	var candidates []string
	visited := 0
	queue := []string{"."}
	for len(queue) > 0 && !l.Truncated {
		dir := queue[0]
		queue = queue[1:]
		entries, err := r.readDir(dir, &visited)
		switch {
		case errors.Is(err, errTooManyEntries):
			l.Truncated = true
			continue
		case err != nil && dir == ".":
			return Listing{}, err
		case err != nil:
			// An unreadable directory is left out, not fatal.
			continue
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, d := range entries {
			p := d.Name()
			if dir != "." {
				p = dir + "/" + p
			}
			switch {
			case r.withheld(d.Name()) != "":
				// Hidden or credential: neither listed nor entered.
			case d.IsDir():
				if !skippedDirs[d.Name()] {
					queue = append(queue, p)
				}
			case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
				candidates = append(candidates, p)
			}
			// Anything else (FIFO, device, socket) is never listed.
		}
	}
	slices.SortStableFunc(candidates, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return da - db
		}
		return strings.Compare(a, b)
	})
	for _, p := range candidates {
		if len(l.Paths) == r.limits.MaxFiles {
			l.Truncated = true
			break
		}
		f, err := r.check(p)
		if err != nil {
			continue
		}
		f.Close()
		l.Paths = append(l.Paths, p)
	}
	return l, nil
}

// errTooManyEntries stops a walk that reached MaxEntries.
var errTooManyEntries = errors.New("too many directory entries")

// readDir reads the directory dir in batches, adding each entry to
// *visited, and gives up with errTooManyEntries, without keeping what it
// read, as soon as *visited passes MaxEntries.
func (r *Repo) readDir(dir string, visited *int) ([]fs.DirEntry, error) {
	f, err := r.root.OpenFile(dir, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if !info.IsDir() {
		return nil, fmt.Errorf("%s is no longer a directory", dir)
	}
	var entries []fs.DirEntry
	for {
		// Never more than one entry past the cap.
		batch, err := f.ReadDir(min(listBatch, r.limits.MaxEntries-*visited+1))
		*visited += len(batch)
		if *visited > r.limits.MaxEntries {
			return nil, errTooManyEntries
		}
		entries = append(entries, batch...)
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// File is the part of one file that goes to the model.
type File struct {
	Path string
	Text string
	// Truncated is set when the text was cut at a cap.
	Truncated bool
}

// Read returns up to max bytes of the file at rel, cut at a UTF-8 boundary.
// The path must pass the same checks as a listed one; the error wraps
// ErrInvalidPath, ErrOutsideRoot or ErrNotEligible.
func (r *Repo) Read(rel string, max int) (File, error) {
	f, err := r.check(rel)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return File{}, err
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return File{}, err
	}
	out := File{Path: rel}
	if len(b) > max {
		b = trimIncompleteRune(b[:max])
		out.Truncated = true
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		// Changed into a binary file since it was checked.
		return File{}, fmt.Errorf("%w: %s is not text", ErrNotEligible, rel)
	}
	out.Text = string(b)
	return out, nil
}

// ReadAll reads the files in order with the per-file and total caps. A
// file past the total cap comes back empty and marked truncated.
func (r *Repo) ReadAll(paths []string) ([]File, error) {
	budget := r.limits.MaxTotalBytes
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := r.Read(p, min(r.limits.MaxReadBytes, budget))
		if err != nil {
			return nil, err
		}
		budget -= len(f.Text)
		out = append(out, f)
	}
	return out, nil
}

// check validates rel and opens the file it names, returning it positioned
// anywhere. It refuses paths that are not clean and relative, that pass
// through a skipped directory, that resolve outside the root, and files
// that are not regular, have more than one hard link, are too large, are
// not text, or are withheld by name or content.
func (r *Repo) check(rel string) (*os.File, error) {
	if err := validRel(rel); err != nil {
		return nil, err
	}
	for _, part := range strings.Split(rel, "/") {
		if skippedDirs[part] {
			return nil, fmt.Errorf("%w: %s is in a skipped directory", ErrNotEligible, rel)
		}
	}
	if rule := r.withheld(rel); rule != "" {
		return nil, &WithheldError{Rule: rule}
	}
	real, err := filepath.EvalSymlinks(filepath.Join(r.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotEligible, rel, cause(err))
	}
	inside, err := filepath.Rel(r.dir, real)
	if err != nil || !filepath.IsLocal(inside) {
		return nil, fmt.Errorf("%w: %s", ErrOutsideRoot, rel)
	}
	for _, part := range strings.Split(filepath.ToSlash(inside), "/") {
		if skippedDirs[part] {
			return nil, fmt.Errorf("%w: %s resolves into a skipped directory", ErrNotEligible, rel)
		}
	}
	if rule := r.withheld(filepath.ToSlash(inside)); rule != "" {
		return nil, &WithheldError{Rule: rule}
	}
	// A FIFO, device or socket is refused before it is opened: opening
	// some of them waits or has effects. The file checked here (not
	// following a link in the last element) is the one that must be
	// opened.
	checked, err := r.root.Lstat(inside)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotEligible, rel, cause(err))
	} else if !checked.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotEligible, rel)
	}
	if hook := r.beforeOpen.Load(); hook != nil {
		(*hook)(inside)
	}
	// Opened by its resolved name through the Root: any link swapped in
	// since EvalSymlinks is still held inside the tree. The open does not
	// block, should a FIFO have been swapped in since. os.Root follows a
	// link inside the tree even when asked not to, so a file swapped
	// since the check, for a link to .git/config or a dotfile, say, would
	// be opened: what was opened must be the very file checked
	// (os.SameFile), or it is refused.
	f, err := r.root.OpenFile(inside, openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotEligible, rel, cause(err))
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, err
	case !os.SameFile(checked, info):
		f.Close()
		return nil, fmt.Errorf("%w: %s changed between its check and its open", ErrNotEligible, rel)
	case !info.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotEligible, rel)
	case linkCount(info) > 1:
		// A hard link is the file itself under another name: nothing in
		// the path shows whether the file's other names lie outside the
		// tree (../outside/secret.txt linked in) or under a withheld name,
		// so a file with more than one is refused, whatever the rule.
		f.Close()
		return nil, fmt.Errorf("%w: %s has %d hard links, and a file with more than one is not served", ErrNotEligible, rel, linkCount(info))
	case info.Size() > r.limits.MaxFileSize:
		f.Close()
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrNotEligible, rel, r.limits.MaxFileSize)
	}
	// At least what Read passes on is inspected, so that a listed file
	// can be read unless it changes; one byte more tells whether the
	// sample was cut.
	sniff := max(sniffSize, r.limits.MaxReadBytes)
	head := make([]byte, sniff+1)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		f.Close()
		return nil, err
	}
	if isBinary(head[:min(n, sniff)], n > sniff) {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not text", ErrNotEligible, rel)
	}
	// What would reach the model is looked at: a private key, a
	// service-account key or a kubeconfig is withheld whatever its name.
	if !r.includeHidden {
		if rule := credentialContent(head[:n]); rule != "" {
			f.Close()
			return nil, &WithheldError{Rule: rule}
		}
	}
	return f, nil
}

// cause is the system error inside a *fs.PathError, without the absolute
// path it names.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validRel accepts only clean, slash-separated, relative paths naming
// something below the root: no absolute paths, no "." or ".." elements,
// no empty elements, no backslashes, no control characters or line
// separators, UTF-8 only (paths go into prompts and JSON as they are).
func validRel(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return fmt.Errorf("%w: %q is absolute", ErrInvalidPath, p)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, isControlOrBackslash):
		return fmt.Errorf("%w: %q is not UTF-8 or holds a control character or backslash", ErrInvalidPath, p)
	case !fs.ValidPath(p):
		return fmt.Errorf("%w: %q is not a clean relative path", ErrInvalidPath, p)
	}
	return nil
}

// isControlOrBackslash refuses C0 and C1 controls, DEL, the Unicode line
// and paragraph separators (which break a line in a prompt like a newline)
// and backslashes.
func isControlOrBackslash(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\\'
}

// isBinary reports whether the first bytes of a file look binary: a NUL
// byte, or bytes that are not UTF-8. When the sample was cut (full), an
// incomplete last character is not held against it.
func isBinary(head []byte, full bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if full {
		head = trimIncompleteRune(head)
	}
	return !utf8.Valid(head)
}

// trimIncompleteRune drops a multi-byte character cut off at the end of b.
func trimIncompleteRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
