package streamablehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Bearer tokens checked on every request. A request without a token is
// answered 401 with the challenge that tells the client where to find the
// authorization server; with a valid token the principal reaches the
// handler as Request.Principal.
func ExampleBearerAuthenticator() {
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "whoami", Version: "1.0.0"}, OmitServerInfo: true,
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddTool(mrtr.Tool{Name: "whoami"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("You are " + req.Principal + ".")}}, nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	// verify maps a token to its principal; a real one checks a signed
	// token's issuer, audience, expiry and scope, or asks the issuer.
	verify := func(ctx context.Context, token string) (*mrtr.TokenInfo, error) {
		if token == "token-for-ada" {
			return &mrtr.TokenInfo{Subject: "ada"}, nil
		}
		return nil, errors.New("unknown token")
	}
	auth := streamablehttp.BearerAuthenticator(verify,
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`)
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(auth))
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	// call sends tools/call whoami, with a token when one is given.
	call := func(token string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "whoami")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, http.StatusText(resp.StatusCode))
		if c := resp.Header.Get("WWW-Authenticate"); c != "" {
			fmt.Println("WWW-Authenticate:", c)
			return
		}
		fmt.Println(string(out))
	}
	call("")
	call("token-for-ada")
	// Output:
	// 401 Unauthorized
	// WWW-Authenticate: Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"
	// 200 OK
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"You are ada."}]}}
}
