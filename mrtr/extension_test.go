package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// A small custom extension on the extension seam: "com.example/notes"
// adds notes/pin, whose target is params.note (mirrored in Mcp-Name on
// Streamable HTTP), and answers with a result kind of its own. A request
// that does not declare the extension is refused with -32021 before its
// params are read.
func ExampleServer_AddMethod() {
	srv, err := mrtr.New("notes", "1.0.0")
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddMethod("notes/pin", mrtr.MethodSpec{
		Extension: "com.example/notes",
		Target:    "note",
		Kinds:     []string{"pinned"},
		Handler: mrtr.MethodHandlerFunc(func(ctx context.Context, req *mrtr.MethodRequest) (*mrtr.MethodResult, error) {
			if req.Target == "" {
				return nil, mrtr.InvalidParamsError("notes/pin needs params.note")
			}
			return &mrtr.MethodResult{Kind: "pinned", Body: map[string]string{"note": strings.ToUpper(req.Target)}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	send := func(body string) {
		msg, _, perr := mrtr.ParseMessage([]byte(body))
		if perr != nil {
			log.Fatal(perr)
		}
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		if resp.Error != nil {
			fmt.Println("error", int(resp.Error.Code))
			return
		}
		var out struct {
			ResultType string `json:"resultType"`
			Note       string `json:"note"`
		}
		_ = json.Unmarshal(resp.Result, &out)
		fmt.Println(out.ResultType, out.Note)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}`
	send(`{"jsonrpc":"2.0","id":1,"method":"notes/pin","params":{"note":"milk",` + fmt.Sprintf(meta, `{}`) + `}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"notes/pin","params":{"note":"milk",` + fmt.Sprintf(meta, `{"extensions":{"com.example/notes":{}}}`) + `}}`)
	// Output:
	// error -32021
	// pinned MILK
}

func TestExtensionMethodsPassTheLadderOnTheWire(t *testing.T) {
	srv := testkit.Server(t, testDesc())
	calls := 0
	require.NoError(t, srv.AddMethod("notes/pin", mrtr.MethodSpec{
		Extension: "com.example/notes", Target: "note", Kinds: []string{"pinned"},
		Handler: mrtr.MethodHandlerFunc(func(ctx context.Context, req *mrtr.MethodRequest) (*mrtr.MethodResult, error) {
			calls++
			switch req.Target {
			case "bad-kind":
				return &mrtr.MethodResult{Kind: "undeclared"}, nil
			case "ack":
				return nil, nil
			}
			return &mrtr.MethodResult{Kind: "pinned", Body: map[string]string{"note": req.Target, "who": req.Principal}}, nil
		}),
	}))
	require.NoError(t, srv.AddMethod("notes/count", mrtr.MethodSpec{Handler: mrtr.MethodHandlerFunc(func(ctx context.Context, req *mrtr.MethodRequest) (*mrtr.MethodResult, error) {
		return &mrtr.MethodResult{Body: json.RawMessage(`{"count":3}`)}, nil
	})}))
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(func(r *http.Request) (*mrtr.TokenInfo, error) {
		return &mrtr.TokenInfo{Subject: "carol"}, nil
	}))
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	defer hs.Close()
	c := &wireClient{t: t, url: hs.URL + "/mcp"}
	declared := obj{"extensions": obj{"com.example/notes": obj{}}}

	d := c.call("server/discover", nil, nil)
	assert.Contains(t, string(d.Result["capabilities"]), `"extensions":{"com.example/notes":{}}`)

	// Not declared: -32021 naming the extension, before the handler and
	// before the params are judged (a non-string target too).
	r := c.call("notes/pin", nil, obj{"note": 7}, "7")
	require.NotNil(t, r.Error)
	assert.Equal(t, -32021, r.Error.Code)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"com.example/notes":{}}}}`, string(r.Error.Data))
	assert.Zero(t, calls)

	r = c.call("notes/pin", declared, obj{"note": "milk"})
	require.Nil(t, r.Error)
	assert.Equal(t, `"pinned"`, string(r.Result["resultType"]))
	assert.Equal(t, "milk", r.str("note"))
	assert.Equal(t, "carol", r.str("who"))
	assert.Contains(t, string(r.Result["_meta"]), "io.modelcontextprotocol/serverInfo")

	// The target mirrors Mcp-Name; it must be a string.
	r = c.call("notes/pin", declared, obj{"note": "milk"}, "eggs")
	require.NotNil(t, r.Error)
	assert.Equal(t, -32020, r.Error.Code)
	r = c.call("notes/pin", declared, obj{"note": 7}, "7")
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)

	// An empty acknowledgement; an undeclared kind is a server bug.
	r = c.call("notes/pin", declared, obj{"note": "ack"})
	require.Nil(t, r.Error)
	assert.Equal(t, `"complete"`, string(r.Result["resultType"]))
	r = c.call("notes/pin", declared, obj{"note": "bad-kind"})
	require.NotNil(t, r.Error)
	assert.Equal(t, -32603, r.Error.Code)

	// A custom method with no extension and no target.
	r = c.call("notes/count", nil, nil)
	require.Nil(t, r.Error)
	assert.Equal(t, "3", string(r.Result["count"]))
}

func TestAddMethodRefusesCoreAndDuplicateMethods(t *testing.T) {
	srv := testkit.Server(t, testDesc())
	h := mrtr.MethodHandlerFunc(func(context.Context, *mrtr.MethodRequest) (*mrtr.MethodResult, error) { return nil, nil })
	for _, name := range []string{"tools/call", "server/discover", "initialize", "ping", "", "bad name"} {
		assert.Error(t, srv.AddMethod(name, mrtr.MethodSpec{Handler: h}), name)
	}
	assert.Error(t, srv.AddMethod("x/y", mrtr.MethodSpec{}), "nil handler")
	assert.Error(t, srv.AddMethod("x/y", mrtr.MethodSpec{Handler: h, Extension: "no-slash"}))
	assert.Error(t, srv.AddMethod("x/y", mrtr.MethodSpec{Handler: h, Kinds: []string{"input_required"}}))
	require.NoError(t, srv.AddMethod("x/y", mrtr.MethodSpec{Handler: h}))
	assert.Error(t, srv.AddMethod("x/y", mrtr.MethodSpec{Handler: h}), "duplicate")
}
