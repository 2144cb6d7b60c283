package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// An MCP server as an OAuth protected resource: the metadata document and
// the endpoint on one mux, JWT access tokens checked by a Verifier, and a
// tool that needs the files:read scope. A real server gives the Verifier
// the issuer's JWKSURL instead of a key made here.
func Example() {
	const (
		issuer   = "https://auth.example.com"
		resource = "https://mcp.example.com/mcp"
	)
	// The authorization server's signing key; here made on the spot.
	signingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}

	verifier, err := oauth.NewVerifier(oauth.Config{
		Issuer:   issuer,
		Audience: resource,
		Keys:     []oauth.Key{{ID: "k1", Public: &signingKey.PublicKey}},
	})
	if err != nil {
		log.Fatal(err)
	}
	metaURL, err := oauth.MetadataURL(resource)
	if err != nil {
		log.Fatal(err)
	}
	metaPath, err := oauth.MetadataPath(resource)
	if err != nil {
		log.Fatal(err)
	}

	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "files", Version: "1.0.0"}, OmitServerInfo: true,
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddTool(mrtr.Tool{Name: "read"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("read for " + req.Principal), nil
	}), mrtr.RequireScopes("files:read"))
	if err != nil {
		log.Fatal(err)
	}
	endpoint, err := streamablehttp.New(srv,
		streamablehttp.WithAllowedHosts("mcp.example.com"),
		streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(verifier.Verify, oauth.Challenge(metaURL))),
		streamablehttp.WithResourceMetadata(metaURL))
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.Handle(metaPath, oauth.MetadataHandler(oauth.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"files:read"},
	}))

	// token plays the authorization server: a JWT access token for the
	// resource, with the given scope.
	token := func(scope string) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: signingKey, KeyID: "k1"}},
			(&jose.SignerOptions{}).WithType("at+jwt"))
		if err != nil {
			log.Fatal(err)
		}
		now := time.Now()
		tok, err := jwt.Signed(signer).Claims(map[string]any{
			"iss": issuer, "aud": resource, "sub": "ada", "scope": scope,
			"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		}).Serialize()
		if err != nil {
			log.Fatal(err)
		}
		return tok
	}
	// call sends tools/call read to the mux, with a token when one is
	// given.
	call := func(token string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "read")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(rec.Code, http.StatusText(rec.Code))
		if c := rec.Header().Get("WWW-Authenticate"); c != "" {
			fmt.Println("WWW-Authenticate:", c)
			return
		}
		fmt.Println(rec.Body.String())
	}

	call("")
	call(token("files:write"))
	call(token("files:read"))

	// The document the challenge points to.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, metaURL, nil))
	doc, _ := io.ReadAll(rec.Body)
	fmt.Println(rec.Code, string(doc))
	// Output:
	// 401 Unauthorized
	// WWW-Authenticate: Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	// 403 Forbidden
	// WWW-Authenticate: Bearer error="insufficient_scope", scope="files:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 OK
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"read for ada"}]}}
	// 200 {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["files:read"],"bearer_methods_supported":["header"]}
}
