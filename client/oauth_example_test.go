package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"log"
	"os"

	"github.com/mrtrkit/mrtrkit/client"
)

// A service calls an MCP server with the client credentials grant,
// authenticated with a signed JWT (private_key_jwt), its tokens bound to a
// DPoP key.
func ExampleNewClientCredentials() {
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // the key registered for the client
	dpop, err := client.GenerateDPoP()
	if err != nil {
		log.Fatal(err)
	}
	auth := client.NewClientCredentials(client.GrantConfig{
		ClientID:  "reporting-service",
		ClientKey: &client.ClientKey{Key: key, KeyID: "2026-01"},
		DPoP:      dpop,
	})
	c, err := client.Connect(ctx, client.HTTP("https://mcp.example.com/mcp", client.WithAuthorizer(auth)))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// A workload presents the JWT its platform issued (workload identity
// federation); an enterprise client trades the user's ID token at its
// identity provider for an ID-JAG instead (IDJAG).
func ExampleNewJWTBearer() {
	ctx := context.Background()
	workload := func(ctx context.Context, r client.AssertionRequest) (string, error) {
		b, err := os.ReadFile(os.Getenv("WORKLOAD_TOKEN_FILE"))
		return string(b), err
	}
	c, err := client.Connect(ctx, client.HTTP("https://mcp.example.com/mcp",
		client.WithAuthorizer(client.NewJWTBearer(workload, client.GrantConfig{ClientID: "batch-job"}))))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	enterprise := client.IDJAG(client.IDJAGConfig{
		TokenURL: "https://idp.example.com/oauth2/token",
		ClientID: "mcp-client-at-idp",
		IDToken:  func(context.Context) (string, error) { return os.Getenv("ID_TOKEN"), nil },
	})
	_ = client.NewJWTBearer(enterprise, client.GrantConfig{ClientID: "mcp-client", ClientSecret: os.Getenv("CLIENT_SECRET")})
}
