package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
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
	var c conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := client.OAuthConfig{
		RedirectURL:       "http://localhost:3000/callback",
		ClientName:        "mrtrkit-conformance-client",
		ClientMetadataURL: cimdURL,
		Browser:           headless,
	}
	a, err := extensionAuthorizer(scenario, c, cfg)
	if err != nil {
		return err
	}
	if a == nil {
		cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = c.ClientID, c.ClientSecret, c.Issuer
		a = client.NewOAuth(cfg)
	}
	return listAndCall(ctx, url, "test-tool", map[string]any{}, client.WithAuthorizer(a))
}

// conformanceContext is MCP_CONFORMANCE_CONTEXT of the auth scenarios:
// the pre-registered client of the OAuth scenarios and what the OAuth
// extension scenarios need.
type conformanceContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// extensionAuthorizer returns the authorizer of an OAuth extension
// scenario, or nil for the other scenarios. cfg is the OAuth client of
// the scenarios that run the authorization code flow; the DPoP scenarios
// add a DPoP key to it.
func extensionAuthorizer(scenario string, c conformanceContext, cfg client.OAuthConfig) (client.Authorizer, error) {
	switch scenario {
	case "auth/client-credentials-basic":
		return client.NewClientCredentials(client.GrantConfig{ClientID: c.ClientID, ClientSecret: c.ClientSecret}), nil
	case "auth/client-credentials-jwt":
		block, _ := pem.Decode([]byte(c.PrivateKeyPEM))
		if block == nil {
			return nil, errors.New("private_key_pem is not PEM")
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("private_key_pem: %w", err)
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("private_key_pem holds a %T", k)
		}
		return client.NewClientCredentials(client.GrantConfig{ClientID: c.ClientID, ClientKey: &client.ClientKey{Key: signer}}), nil
	case "auth/enterprise-managed-authorization":
		idjag := client.IDJAG(client.IDJAGConfig{
			TokenURL: c.IDPTokenEndpoint,
			ClientID: c.IDPClientID,
			IDToken:  func(context.Context) (string, error) { return c.IDPIDToken, nil },
		})
		return client.NewJWTBearer(idjag, client.GrantConfig{ClientID: c.ClientID, ClientSecret: c.ClientSecret}), nil
	case "auth/wif-jwt-bearer":
		workload := func(context.Context, client.AssertionRequest) (string, error) { return c.ValidJWT, nil }
		return client.NewJWTBearer(workload, client.GrantConfig{ClientID: c.ClientID}), nil
	case "auth/dpop", "auth/dpop-nonce":
		d, err := client.GenerateDPoP()
		if err != nil {
			return nil, err
		}
		cfg.DPoP = d
		return client.NewOAuth(cfg), nil
	}
	return nil, nil
}
