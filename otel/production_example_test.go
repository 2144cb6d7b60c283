package otelmrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Example_production is the README's "Running in production" block: the
// code between the markers is that block, indented once; TestREADMEProduction
// keeps the two the same. It is compiled, not run.
func Example_production() {
	desc := discover.Description{Server: discover.Implementation{Name: "deployer", Version: "1.0.0"}}
	canSee := func(principal string, tok *mrtr.TokenInfo, kind, name string) bool {
		return tok.HasScope("deploy") || name != "deploy"
	}
	auditLog := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	deployTool := mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object"}`)}
	deploy := mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("deployed"), nil })

	// README begins
	verifier, _ := oauth.NewVerifier(oauth.Config{
		Issuer:   "https://auth.example.com",
		Audience: "https://mcp.example.com/mcp", // tokens issued for another resource are refused
		JWKSURL:  "https://auth.example.com/.well-known/jwks.json",
	})
	metaURL, _ := oauth.MetadataURL("https://mcp.example.com/mcp")
	metaPath, _ := oauth.MetadataPath("https://mcp.example.com/mcp")

	srv, _ := mrtr.NewServer(desc,
		mrtr.RequireKeys(), // refuse to start without MRTRKIT_STATE_KEYS
		mrtr.WithAudience("https://mcp.example.com/mcp"), // states of other deployments are refused
		mrtr.WithVisibility(canSee),                      // per-caller lists, calls and discovery
		mrtr.WithInterceptors(otelmrtr.Interceptor(), mrtr.AuditLog(auditLog)))
	srv.AddTool(deployTool, deploy, mrtr.RequireScopes("deploy")) // 403 insufficient_scope otherwise

	ready := streamablehttp.Readiness(srv)
	endpoint, _ := streamablehttp.New(srv,
		streamablehttp.WithAllowedHosts("mcp.example.com"),
		streamablehttp.WithAllowedOrigins("https://app.example.com"),
		streamablehttp.WithCORS(streamablehttp.CORS{}),
		streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(verifier.Verify, oauth.Challenge(metaURL))),
		streamablehttp.WithResourceMetadata(metaURL),
		streamablehttp.WithForwardedHeaders("X-Tenant"),
		// served beside /mcp by the same handler, without its Host, Origin and auth checks
		streamablehttp.WithResourceMetadataHandler(metaPath, oauth.MetadataHandler(oauth.Metadata{
			Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://auth.example.com"},
		})),
		streamablehttp.WithLiveness("/livez"),
		streamablehttp.WithReadiness("/readyz", ready)) // 503 without keys, while draining, once closed
	log.Fatal(streamablehttp.NewHTTPServer(":8080", endpoint).ListenAndServe())
	// README ends
}

// TestREADMEProduction checks that the README's production block is the
// code of Example_production, so that the README shows code that compiles.
func TestREADMEProduction(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("production_example_test.go")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Running in production.*?```go\n(.*?)```").FindSubmatch(readme)
	require.False(t, block == nil, "README has no Running in production block")
	code := regexp.MustCompile("(?s)// README begins\n(.*?)\t// README ends").FindSubmatch(src)
	require.False(t, code == nil, "the example has no README markers")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(code[1]), "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if got, want := strings.Join(lines, "\n")+"\n", string(block[1]); got != want {
		assert.Fail(t, fmt.Sprintf("README block and Example_production differ:\nREADME:\n%s\nexample:\n%s", want, got))
	}
}
