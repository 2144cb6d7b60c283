package streamablehttp

import (
	"net/http"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// era is one generation of the protocol served at the endpoint. The
// Handler runs the checks every generation shares (Host and Origin,
// authentication, and for a POST the body limit, content negotiation and
// JSON-RPC parsing), then gives the request to the first era that claims
// it. The modern era (MCP 2026-07-28, no sessions) claims every POST; an
// era for older clients, with sessions and GET streams, goes before it and
// claims only what is recognisably its own.
type era interface {
	// methods lists the HTTP methods the era answers.
	methods() []string
	// claims reports whether the era serves r. msg is the parsed body of a
	// POST and nil for other methods.
	claims(r *http.Request, msg *mrtr.Message) bool
	// serve answers a claimed request.
	serve(w http.ResponseWriter, r *http.Request, x exchange)
}

// exchange is what the shared checks learned about a request.
type exchange struct {
	principal string
	token     *mrtr.TokenInfo   // nil when anonymous
	headers   map[string]string // the forwarded headers (WithForwardedHeaders)
	msg       *mrtr.Message     // nil unless the method is POST
}
