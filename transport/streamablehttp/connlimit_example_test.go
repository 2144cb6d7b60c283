package streamablehttp_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// The connection bounds of NewHTTPServer on an http.Server of one's own:
// the same timeouts, and a ConnLimit applied before it serves.
func ExampleConnLimit_Apply() {
	mux := http.NewServeMux() // the MCP Handler and whatever sits beside it
	hs := &http.Server{
		Addr:              "127.0.0.1:8080",
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	limit := streamablehttp.NewConnLimit(2048)
	limit.Apply(hs) // keeps hs's own ConnContext and ConnState; set neither afterwards
	// hs.ListenAndServe() ...
	s := limit.Stats()
	fmt.Println(s.Max, s.Open)
	// Output: 2048 0
}
