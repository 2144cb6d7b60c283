package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
)

// cimdURL is the client ID metadata document URL the suite expects; the
// harness serves it and does not pass it to the client.
const cimdURL = "https://conformance-test.local/client-metadata.json"

func isAuth(scenario string) bool { return strings.HasPrefix(scenario, "auth/") }

// headless is the browser step without a user: it requests the
// authorization URL without following the redirect and returns where the
// authorization server sent the user back.
func headless(ctx context.Context, authURL string) (string, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered HTTP %s without a redirect", resp.Status)
	}
	return loc, nil
}

// authFlow runs the well-behaved OAuth client of every auth scenario:
// connect, list the tools, call test-tool.
func authFlow(ctx context.Context, scenario, url string) error {
	cfg := client.OAuthConfig{
		RedirectURL:       "http://localhost:3000/callback",
		ClientName:        "mrtrkit-conformance-client",
		ClientMetadataURL: cimdURL,
		Browser:           headless,
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			Issuer       string `json:"issuer"`
		}
		if err := json.Unmarshal([]byte(raw), &c); err == nil {
			cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = c.ClientID, c.ClientSecret, c.Issuer
		}
	}
	err := listAndCall(ctx, url, "test-tool", map[string]any{}, client.WithAuthorizer(client.NewOAuth(cfg)))
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return err
}
