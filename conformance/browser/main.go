// Command browser is the server of the browser test (run.sh): it serves an
// MCP endpoint with CORS on one loopback port and the same test page from
// two others, one an allowed origin and one not. The page calls a tool
// cross-origin with fetch() and writes the outcome into its DOM, which
// run.sh reads from headless Chromium.
//
// It prints one line, "ready mcp=URL page=URL other=URL", once every
// listener is open, logs each request to the endpoint on stderr, and runs
// until it gets SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("browser-server: ")
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func listen() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	return l
}

func run() error {
	mcpL, pageL, otherL := listen(), listen(), listen()
	mcpURL := "http://" + mcpL.Addr().String() + "/mcp"
	pageOrigin := "http://" + pageL.Addr().String()
	otherOrigin := "http://" + otherL.Addr().String()

	// A key made for this run: the server is then ready, and no warning.
	ring, err := state.GenerateKeyRing()
	if err != nil {
		return err
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		return err
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "browser-test", Version: "1.0.0"},
	}, mrtr.WithCodec(codec))
	if err != nil {
		return err
	}
	err = srv.AddTool(mrtr.Tool{
		Name:        "forecast",
		Description: "Says the weather in a city",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}},"required":["city"]}`),
	}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ City string }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return mrtr.ErrorResult("arguments: " + err.Error()), nil
		}
		return mrtr.TextResult("forecast for " + args.City + ": sunny"), nil
	}))
	if err != nil {
		return err
	}
	h, err := streamablehttp.New(srv,
		streamablehttp.WithAllowedOrigins(pageOrigin),
		streamablehttp.WithCORS(streamablehttp.CORS{}))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", logged(h))
	mux.Handle("/livez", streamablehttp.Liveness())
	ready := streamablehttp.Readiness(srv)
	mux.Handle("/readyz", ready)
	mcpServer := streamablehttp.NewHTTPServer(mcpL.Addr().String(), mux)

	page := pageHandler(mcpURL)
	pageServer := streamablehttp.NewHTTPServer(pageL.Addr().String(), page)
	otherServer := streamablehttp.NewHTTPServer(otherL.Addr().String(), page)

	errc := make(chan error, 3)
	go func() { errc <- mcpServer.Serve(mcpL) }()
	go func() { errc <- pageServer.Serve(pageL) }()
	go func() { errc <- otherServer.Serve(otherL) }()
	fmt.Printf("ready mcp=%s page=%s/ other=%s/\n", mcpURL, pageOrigin, otherOrigin)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
	case err := <-errc:
		return err
	}
	ready.Drain()
	_ = srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range []*http.Server{mcpServer, pageServer, otherServer} {
		_ = s.Shutdown(ctx)
	}
	return nil
}

// logged logs each request to the endpoint: method, origin, the headers a
// preflight asks for, and the status answered.
func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		log.Printf("request method=%s origin=%q request-headers=%q status=%d",
			r.Method, r.Header.Get("Origin"), r.Header.Get("Access-Control-Request-Headers"), rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>MCP from a browser</title></head>
<body>
<pre id="result">pending</pre>
<script>
const endpoint = {{.}};
const body = {
  jsonrpc: "2.0", id: 1, method: "tools/call",
  params: {
    name: "forecast", arguments: {city: "Oslo"},
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}
    }
  }
};
const out = document.getElementById("result");
fetch(endpoint, {
  method: "POST",
  headers: {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "forecast",
    "Mcp-Param-City": "Oslo"
  },
  body: JSON.stringify(body)
}).then(async (resp) => {
  const msg = await resp.json();
  const text = msg.result && msg.result.content ? msg.result.content[0].text : JSON.stringify(msg);
  out.textContent = "answered status=" + resp.status + " text=" + text;
}).catch((err) => {
  out.textContent = "refused: " + err;
});
</script>
</body></html>
`))

// pageHandler serves the test page, which calls endpoint.
func pageHandler(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_ = pageTemplate.Execute(w, endpoint)
	})
}
