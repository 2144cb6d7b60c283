package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxBody bounds a JSON response body.
const maxBody = 64 << 20

// defaultReconnect is the wait before a stream of the initialize era is
// resumed when the server named no retry interval.
const defaultReconnect = time.Second

// maxResumes bounds how often one call's stream is resumed with GET.
const maxResumes = 5

// Authorizer supplies the bearer token of an HTTP transport and reacts to
// the server's authorization challenges. The oauth package of this module
// provides one; a fixed token is WithBearerToken.
type Authorizer interface {
	// Token returns the token to send, or "" for none.
	Token(ctx context.Context) (string, error)
	// Authorize is called with a 401, or a 403 with insufficient_scope;
	// when it returns nil the request is sent again with the new Token.
	Authorize(ctx context.Context, resp *http.Response) error
}

// maxAuthorizations bounds the authorizations of one request.
const maxAuthorizations = 3

// HTTPOption configures the HTTP transport.
type HTTPOption interface{ applyHTTP(*httpTransport) }

type httpOptionFunc func(*httpTransport)

func (f httpOptionFunc) applyHTTP(t *httpTransport) { f(t) }

// WithHTTPClient sends the requests with hc (default: a client that does
// not follow redirects).
func WithHTTPClient(hc *http.Client) HTTPOption {
	return httpOptionFunc(func(t *httpTransport) { t.hc = hc })
}

// WithBearerToken sends Authorization: Bearer token on every request. The
// token is never sent over plain http to a host that is not loopback.
func WithBearerToken(token string) HTTPOption {
	return WithAuthorizer(staticToken(token))
}

// WithAuthorizer gets tokens from a and lets it answer challenges.
func WithAuthorizer(a Authorizer) HTTPOption {
	return httpOptionFunc(func(t *httpTransport) { t.auth = a })
}

// WithHeader adds a header to every request.
func WithHeader(name, value string) HTTPOption {
	return httpOptionFunc(func(t *httpTransport) { t.extra = append(t.extra, [2]string{name, value}) })
}

type staticToken string

func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }
func (s staticToken) Authorize(context.Context, *http.Response) error {
	return errors.New("the server refused the bearer token")
}

type httpTransport struct {
	url   string
	hc    *http.Client
	auth  Authorizer
	extra [][2]string
}

// HTTP is the Streamable HTTP transport to the MCP endpoint at url.
func HTTP(url string, opts ...HTTPOption) Transport {
	t := &httpTransport{url: url}
	for _, o := range opts {
		o.applyHTTP(t)
	}
	return t
}

func (t *httpTransport) String() string { return t.url }

// noRedirectClient is the default HTTP client of the package: it follows
// no redirects, so that requests (and their credentials) go only where
// they were sent.
func noRedirectClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (t *httpTransport) dial(ctx context.Context, c *Client) (conn, error) {
	u, err := url.Parse(t.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", t.url)
	}
	hc := t.hc
	if hc == nil {
		hc = noRedirectClient()
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &httpConn{t: t, u: u, hc: hc, c: c, bg: bg, stop: cancel, pending: map[int64]chan *message{}}, nil
}

// httpConn is an open Streamable HTTP transport.
type httpConn struct {
	t    *httpTransport
	u    *url.URL
	hc   *http.Client
	c    *Client
	bg   context.Context // lives until close
	stop context.CancelFunc

	mu      sync.Mutex
	session string // Mcp-Session-Id of the initialize era
	version string // the session's protocol version
	pending map[int64]chan *message
	wg      sync.WaitGroup
}

// loopback reports whether host is a loopback name or address.
func loopback(host string) bool {
	host = strings.ToLower(host) // host names are case-insensitive
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenAllowed refuses a token over plain http off loopback.
func tokenAllowed(u *url.URL) error {
	if u.Scheme == "https" || loopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrInsecureToken, u.Host)
}

// do sends one HTTP request built by build, adding the token and
// answering authorization challenges.
func (h *httpConn) do(ctx context.Context, build func() (*http.Request, error)) (*http.Response, error) {
	for n := 0; ; n++ {
		req, err := build()
		if err != nil {
			return nil, err
		}
		for _, kv := range h.t.extra {
			req.Header.Set(kv[0], kv[1])
		}
		if h.t.auth != nil {
			if err := setAuthorization(ctx, h.t.auth, req); err != nil {
				return nil, err
			}
		}
		resp, err := h.hc.Do(req)
		if err != nil {
			return nil, err
		}
		challenge := resp.StatusCode == http.StatusUnauthorized ||
			(resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope"))
		if !challenge || h.t.auth == nil || n >= maxAuthorizations {
			return resp, nil
		}
		aerr := h.t.auth.Authorize(ctx, resp)
		drain(resp)
		if aerr != nil {
			return nil, &httpStatusError{status: resp.StatusCode, err: fmt.Errorf("authorization failed: %w", aerr)}
		}
	}
}

// httpStatusError carries the HTTP status of a failed exchange.
type httpStatusError struct {
	status int
	err    error
}

func (e *httpStatusError) Error() string { return e.err.Error() }
func (e *httpStatusError) Unwrap() error { return e.err }

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// headers sets the headers every POST carries.
func (h *httpConn) headers(r *http.Request, version string) {
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		r.Header.Set("MCP-Protocol-Version", version)
	}
	h.mu.Lock()
	if h.session != "" {
		r.Header.Set("Mcp-Session-Id", h.session)
	}
	h.mu.Unlock()
}

func (h *httpConn) send(ctx context.Context, out *outbound) (*message, int, error) {
	ch := make(chan *message, 1)
	h.mu.Lock()
	h.pending[out.id] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, out.id)
		h.mu.Unlock()
	}()
	resp, err := h.do(ctx, func() (*http.Request, error) { return h.post1(ctx, out) })
	if err != nil {
		var se *httpStatusError
		if errors.As(err, &se) {
			return nil, se.status, se.err
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	status := resp.StatusCode
	if out.method == "initialize" && status == http.StatusOK {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			h.mu.Lock()
			h.session = sid
			h.mu.Unlock()
		}
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case status == http.StatusOK && ctype == "text/event-stream":
		m, err := h.awaitStream(ctx, out, resp.Body, ch)
		return m, status, err
	case ctype == "application/json" && (status == http.StatusOK || status == http.StatusBadRequest || status == http.StatusNotFound):
		m, err := readJSONResponse(resp, out.id)
		return m, status, err
	case status == http.StatusAccepted:
		return nil, status, errors.New("HTTP 202 without a response: the server took the request for a notification")
	case status == http.StatusNotFound && out.legacy && h.hasSession():
		return nil, status, errors.New("the server no longer knows the session (HTTP 404); connect again")
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, status, httpFailure(resp, body, nil)
}

// post1 builds the POST of one request, with the standard headers of its
// era.
func (h *httpConn) post1(ctx context.Context, out *outbound) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.t.url, bytes.NewReader(out.body))
	if err != nil {
		return nil, err
	}
	version := out.version
	if out.method == "initialize" {
		version = "" // the version is not agreed yet
	}
	h.headers(r, version)
	if !out.legacy {
		r.Header.Set("Mcp-Method", out.method)
		if out.name != "" {
			r.Header.Set("Mcp-Name", EncodeHeaderValue(out.name))
		}
		for k, v := range out.params {
			r.Header["Mcp-Param-"+k] = []string{v}
		}
	}
	return r, nil
}

// awaitStream reads the event stream of request out until its response
// arrives (on this stream or, in the initialize era, on any other). A
// stream of the initialize era that breaks is resumed with GET and
// Last-Event-ID after the server's retry interval.
func (h *httpConn) awaitStream(ctx context.Context, out *outbound, body io.Reader, ch chan *message) (*message, error) {
	lastID, retry, hasID, serr := h.readStream(ctx, body, out.onNote, out.id)
	for resumes := 0; ; resumes++ {
		select {
		case m := <-ch:
			return m, nil
		default:
		}
		if !out.legacy || !hasID || resumes >= maxResumes || ctx.Err() != nil {
			if serr == nil {
				serr = errors.New("the response stream ended without the response")
			}
			return nil, h.cancelled(ctx, out, serr)
		}
		if err := sleep(ctx, retry); err != nil {
			return nil, h.cancelled(ctx, out, err)
		}
		lastID, retry, hasID, serr = h.resume(ctx, lastID, retry, out.onNote, out.id)
	}
}

// readJSONResponse reads a JSON body that must be the response to id.
func readJSONResponse(resp *http.Response, id int64) (*message, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("a response larger than %d bytes", maxBody)
	}
	m, err := parseMessage(body)
	if err != nil {
		return nil, httpFailure(resp, body, err)
	}
	if !m.isResponse() || (m.hasID() && m.intID() != id) {
		return nil, httpFailure(resp, body, errors.New("the body is not the response to the request"))
	}
	if resp.StatusCode != http.StatusOK && m.Error == nil {
		return nil, httpFailure(resp, body, errors.New("an error status with a result"))
	}
	return m, nil
}

func (h *httpConn) hasSession() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session != ""
}

// cancelled tells a server of the initialize era that a call it may
// still be working on was abandoned, and returns err.
func (h *httpConn) cancelled(ctx context.Context, out *outbound, err error) error {
	if ctx.Err() != nil && out.legacy && out.method != "initialize" {
		body := requestBody(0, "notifications/cancelled", objectOf([]member{
			{"requestId", mustJSON(out.id)}, {"reason", mustJSON(ctx.Err().Error())}}))
		nctx, cancel := context.WithTimeout(h.bg, 5*time.Second)
		_ = h.notify(nctx, "notifications/cancelled", body)
		cancel()
	}
	return err
}

// httpFailure describes an HTTP answer that holds no usable JSON-RPC
// response.
func httpFailure(resp *http.Response, body []byte, cause error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s", resp.Status)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		fmt.Fprintf(&b, " (%s)", clip(ct, 80))
	}
	if ch := resp.Header.Values("WWW-Authenticate"); len(ch) > 0 {
		fmt.Fprintf(&b, "; WWW-Authenticate: %s", clip(strings.Join(ch, ", "), 300))
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		fmt.Fprintf(&b, "; a redirect to %q, not followed", clip(loc, 200))
	}
	if cause != nil {
		fmt.Fprintf(&b, ": %v", cause)
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		fmt.Fprintf(&b, ": %s", clip(strings.ToValidUTF8(s, "?"), 300))
	}
	return errors.New(b.String())
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readStream reads an event stream: responses go to the calls waiting
// for them (so a response that arrives on another stream is not lost),
// the server's requests are answered, notifications go to onNote (the
// call's) or the client's OnNotification. It returns when the response
// to want arrives or the stream ends, with the last event id and the
// retry interval.
func (h *httpConn) readStream(ctx context.Context, body io.Reader, onNote func(*message), want int64) (lastID string, retry time.Duration, hasID bool, err error) {
	r := newSSEReader(body)
	defer func() {
		lastID, hasID, retry = r.id, r.hasID, defaultReconnect
		if r.retry >= 0 {
			retry = time.Duration(r.retry) * time.Millisecond
		}
	}()
	for {
		ev, err := r.next()
		if err != nil {
			if err == io.EOF {
				return "", 0, false, nil
			}
			return "", 0, false, fmt.Errorf("the event stream broke: %w", err)
		}
		if (ev.Event != "" && ev.Event != "message") || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		m, err := parseMessage(ev.Data)
		if err != nil {
			return "", 0, false, fmt.Errorf("an event of the stream: %w", err)
		}
		if h.dispatch(m, onNote) && m.intID() == want && want != 0 {
			return "", 0, false, nil
		}
	}
}

// dispatch routes one message of a stream and reports whether it was a
// response.
func (h *httpConn) dispatch(m *message, onNote func(*message)) bool {
	switch {
	case m.isResponse():
		h.mu.Lock()
		ch := h.pending[m.intID()]
		h.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
		return true
	case m.hasID() && !h.c.Legacy():
		// A server of 2026-07-28 sends no requests (it embeds them in
		// input_required): ignored, never answered with the user's
		// functions, and nothing is posted back.
	case m.hasID():
		// A request of the server (initialize era): answered while the
		// stream goes on, so that it never waits for the call it is part
		// of.
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			body := h.c.serveRequest(h.bg, m)
			ctx, cancel := context.WithTimeout(h.bg, 30*time.Second)
			defer cancel()
			_ = h.post(ctx, body)
		}()
	default:
		if onNote != nil {
			onNote(m)
		} else {
			h.c.notifyUser(m)
		}
	}
	return false
}

// resume reopens a stream of the initialize era with GET and
// Last-Event-ID.
func (h *httpConn) resume(ctx context.Context, lastID string, retry time.Duration, onNote func(*message), want int64) (string, time.Duration, bool, error) {
	return h.resumeReady(ctx, lastID, retry, onNote, want, nil)
}

// resumeReady is resume that calls ready once the server has answered the
// GET (or failed to).
func (h *httpConn) resumeReady(ctx context.Context, lastID string, retry time.Duration, onNote func(*message), want int64, ready func()) (string, time.Duration, bool, error) {
	if ready != nil {
		defer ready()
	}
	resp, err := h.do(ctx, func() (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, h.t.url, nil)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Accept", "text/event-stream")
		h.mu.Lock()
		if h.session != "" {
			r.Header.Set("Mcp-Session-Id", h.session)
		}
		if h.version != "" {
			r.Header.Set("MCP-Protocol-Version", h.version)
		}
		h.mu.Unlock()
		if lastID != "" {
			r.Header.Set("Last-Event-ID", lastID)
		}
		return r, nil
	})
	if err != nil {
		return lastID, retry, lastID != "", err
	}
	defer resp.Body.Close()
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ctype != "text/event-stream" {
		return lastID, retry, false, fmt.Errorf("resuming the stream: HTTP %s", resp.Status)
	}
	if ready != nil {
		ready()
		ready = nil
	}
	id, r, has, err := h.readStream(ctx, resp.Body, onNote, want)
	if !has {
		id = lastID
		has = lastID != ""
	}
	return id, r, has, err
}

// post sends a message that expects no response (a notification, or the
// client's answer to a server's request).
func (h *httpConn) post(ctx context.Context, body []byte) error {
	h.mu.Lock()
	version := h.version
	h.mu.Unlock()
	resp, err := h.do(ctx, func() (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.t.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		h.headers(r, version)
		return r, nil
	})
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return httpFailure(resp, b, nil)
	}
	return nil
}

func (h *httpConn) notify(ctx context.Context, method string, body []byte) error {
	return h.post(ctx, body)
}

// startSession records the session's version and opens the GET stream on
// which a server of the initialize era sends its own requests and
// notifications. A server without one (405) is fine.
func (h *httpConn) setVersion(version string) {
	h.mu.Lock()
	h.version = version
	h.mu.Unlock()
}

// It returns once the server has answered the first GET (at most a few
// seconds), so that a request the server sends on that stream in answer
// to the client's next call is not sent before the stream is there.
func (h *httpConn) startSession(ctx context.Context) {
	opened := make(chan struct{})
	var once sync.Once
	ready := func() { once.Do(func() { close(opened) }) }
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer ready()
		lastID, retry, fails := "", defaultReconnect, 0
		for h.bg.Err() == nil && fails < maxResumes {
			id, r, has, err := h.resumeReady(h.bg, lastID, retry, nil, 0, ready)
			if has {
				lastID = id
			}
			retry = r
			if err != nil && !has {
				if strings.Contains(err.Error(), "HTTP 405") || strings.Contains(err.Error(), "HTTP 404") {
					return
				}
				fails++
			}
			if sleep(h.bg, retry) != nil {
				return
			}
		}
	}()
	t := time.NewTimer(3 * time.Second)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	case <-ctx.Done():
	}
}

// close ends a session with DELETE and stops the GET stream.
func (h *httpConn) close(ctx context.Context) error {
	h.mu.Lock()
	sid := h.session
	h.mu.Unlock()
	var err error
	if sid != "" {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, derr := h.do(dctx, func() (*http.Request, error) {
			r, err := http.NewRequestWithContext(dctx, http.MethodDelete, h.t.url, nil)
			if err != nil {
				return nil, err
			}
			r.Header.Set("Mcp-Session-Id", sid)
			h.mu.Lock()
			if h.version != "" {
				r.Header.Set("MCP-Protocol-Version", h.version)
			}
			h.mu.Unlock()
			return r, nil
		})
		cancel()
		if derr == nil {
			drain(resp)
		}
	}
	h.stop()
	h.wg.Wait()
	return err
}
