package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// LoopbackRedirect receives the authorization server's redirect on a
// loopback listener, for a native application's OAuth flow: give URL as
// OAuthConfig.RedirectURL and Browser as OAuthConfig.Browser.
type LoopbackRedirect struct {
	// URL is the redirect URI: http://127.0.0.1:<port>/callback.
	URL string

	open func(authURL string) error
	srv  *http.Server
	mu   sync.Mutex
	got  chan string
}

// NewLoopbackRedirect listens on a free loopback port. open sends the user
// to the authorization URL (it opens the system browser, say).
func NewLoopbackRedirect(open func(authURL string) error) (*LoopbackRedirect, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lr := &LoopbackRedirect{URL: "http://" + l.Addr().String() + "/callback", open: open}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		lr.mu.Lock()
		ch := lr.got
		lr.mu.Unlock()
		if ch == nil {
			http.Error(w, "no authorization is in progress", http.StatusConflict)
			return
		}
		select {
		case ch <- "http://" + r.Host + r.URL.RequestURI():
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, "Authorization received. You can close this window.")
		default:
			http.Error(w, "the authorization was answered already", http.StatusConflict)
		}
	})
	lr.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = lr.srv.Serve(l) }()
	return lr, nil
}

// Browser opens authURL with the open function and waits for the
// redirect (or ctx's end); it returns the URL the user was sent back to.
func (lr *LoopbackRedirect) Browser(ctx context.Context, authURL string) (string, error) {
	ch := make(chan string, 1)
	lr.mu.Lock()
	if lr.got != nil {
		lr.mu.Unlock()
		return "", errors.New("another authorization is in progress")
	}
	lr.got = ch
	lr.mu.Unlock()
	defer func() {
		lr.mu.Lock()
		lr.got = nil
		lr.mu.Unlock()
	}()
	if err := lr.open(authURL); err != nil {
		return "", err
	}
	select {
	case u := <-ch:
		return u, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close stops the listener.
func (lr *LoopbackRedirect) Close() error { return lr.srv.Close() }
