package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The fixture server under test. By default the test builds
// ./conformance/server from the mrtrkit module that contains this directory
// and starts it on a free loopback port. These environment variables change
// that:
//
//	FIXTURE_URL          use an already running server at this URL (nothing is built or started)
//	FIXTURE_BIN          start this prebuilt fixture binary instead of building one
//	FIXTURE_LEG_TIMEOUT  the -leg-timeout the fixture runs with (default
//	                     defaultLegTimeout when the test starts it; with
//	                     FIXTURE_URL the timeout tests run only when this says
//	                     what the server uses)
//	FIXTURE_TOKEN        send "Authorization: Bearer FIXTURE_TOKEN" with every
//	                     HTTP request (withToken), for a fixture run with
//	                     -production
const (
	fixturePackage = "./conformance/server"
	fixturePath    = "/mcp"
	rootModule     = "github.com/mrtrkit/mrtrkit"
	buildTimeout   = 5 * time.Minute
	startTimeout   = 30 * time.Second
)

// defaultLegTimeout is the -leg-timeout the tests start the fixture with:
// how long a 2025-11-25 session's client may take to answer one
// server-to-client request.
const defaultLegTimeout = 2 * time.Second

// fixtureURL is the MCP endpoint every test talks to.
var fixtureURL string

// legTimeout is the fixture's leg timeout (FIXTURE_LEG_TIMEOUT, or the
// default the tests start the fixture with).
var legTimeout time.Duration

// fixtureLog collects the fixture server's stdout and stderr.
var fixtureLog lockedBuffer

// fixtureBin is the fixture binary the stdio tests start as a subprocess
// (with -stdio): the one started over HTTP, or, with FIXTURE_URL, one built
// on first use (stdioBinary).
var (
	fixtureBin      string
	fixtureBinOnce  sync.Once
	fixtureBinErr   error
	fixtureBinClean = func() {}
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	url, stop, err := startFixture()
	if err != nil {
		fmt.Fprintf(os.Stderr, "interop: cannot start the fixture server: %v\n", err)
		if s := fixtureLog.String(); s != "" {
			fmt.Fprintf(os.Stderr, "fixture output:\n%s\n", s)
		}
		return 1
	}
	fixtureURL = url
	fmt.Fprintf(os.Stderr, "interop: fixture server at %s\n", url)
	code := m.Run()
	stop()
	fixtureBinClean()
	if code != 0 {
		if s := fixtureLog.String(); s != "" {
			fmt.Fprintf(os.Stderr, "fixture output:\n%s\n", s)
		}
	}
	return code
}

// startFixture makes a fixture server available and returns its endpoint
// URL and a function that stops it.
func startFixture() (string, func(), error) {
	if v := os.Getenv("FIXTURE_LEG_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return "", nil, fmt.Errorf("FIXTURE_LEG_TIMEOUT: want a positive duration such as 2s, got %q", v)
		}
		legTimeout = d
	}
	if url := os.Getenv("FIXTURE_URL"); url != "" {
		if legTimeout == 0 {
			return "", nil, fmt.Errorf("FIXTURE_URL needs FIXTURE_LEG_TIMEOUT, the -leg-timeout that server runs with: the timeout tests depend on it")
		}
		return url, func() {}, nil
	}
	if legTimeout == 0 {
		legTimeout = defaultLegTimeout
	}
	bin := os.Getenv("FIXTURE_BIN")
	cleanup := func() {}
	if bin == "" {
		dir, err := os.MkdirTemp("", "mrtrkit-interop-")
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		bin = filepath.Join(dir, "fixture")
		if err := buildFixture(bin); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	// A port picked by listening on :0 can be taken by someone else before
	// the fixture binds it; try a few times.
	var lastErr error
	fixtureBin = bin
	fixtureBinOnce.Do(func() {}) // the stdio tests use this binary
	for attempt := 0; attempt < 3; attempt++ {
		url, stop, err := launch(bin)
		if err == nil {
			return url, func() { stop(); cleanup() }, nil
		}
		lastErr = err
	}
	cleanup()
	return "", nil, lastErr
}

// stdioBinary returns the fixture binary for the stdio tests: FIXTURE_BIN,
// the binary started for the HTTP tests, or (with FIXTURE_URL) one built
// now.
func stdioBinary() (string, error) {
	fixtureBinOnce.Do(func() {
		if bin := os.Getenv("FIXTURE_BIN"); bin != "" {
			fixtureBin = bin
			return
		}
		dir, err := os.MkdirTemp("", "mrtrkit-interop-stdio-")
		if err != nil {
			fixtureBinErr = err
			return
		}
		fixtureBinClean = func() { os.RemoveAll(dir) }
		fixtureBin = filepath.Join(dir, "fixture")
		fixtureBinErr = buildFixture(fixtureBin)
	})
	return fixtureBin, fixtureBinErr
}

// buildFixture compiles the fixture server package of the enclosing mrtrkit
// module into bin.
func buildFixture(bin string) error {
	return buildPackage(bin, fixturePackage)
}

// buildPackage compiles pkg of the enclosing mrtrkit module into bin.
func buildPackage(bin, pkg string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-C", root, "-o", bin, pkg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build -C %s -o %s %s: %v\n%s", root, bin, pkg, err, out)
	}
	return nil
}

// repoRoot walks up from the working directory to the go.mod that declares
// the mrtrkit module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(data) == rootModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod for module %s above the working directory", rootModule)
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`)
		}
	}
	return ""
}

// launch starts the fixture bin on a free loopback port and waits until it
// accepts TCP connections.
func launch(bin string) (string, func(), error) {
	return launchWith(bin, &fixtureLog, "-path", fixturePath, "-leg-timeout", legTimeout.String())
}

// launchWith starts bin with -addr (a free loopback port) and args, its
// output going to out, and waits until it accepts TCP connections. The
// server is to serve MCP at fixturePath.
func launchWith(bin string, out io.Writer, args ...string) (string, func(), error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, append([]string{"-addr", addr}, args...)...)
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return "", nil, fmt.Errorf("fixture exited before listening on %s: %v", addr, err)
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return "http://" + addr + fixturePath, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, errors.New("fixture did not listen on " + addr + " within " + startTimeout.String())
}

// withToken returns next, or, when FIXTURE_TOKEN is set, a RoundTripper
// that adds "Authorization: Bearer FIXTURE_TOKEN" to every request before
// next sends it.
func withToken(next http.RoundTripper) http.RoundTripper {
	token := os.Getenv("FIXTURE_TOKEN")
	if token == "" {
		return next
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+token)
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
