package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// Hello world: a Server and one tool. Serve it with
// streamablehttp.New(srv) or stdio.ServeStdio(ctx, srv).
func ExampleNew() {
	srv, err := mrtr.New("hello", "1.0.0")
	if err != nil {
		log.Fatal(err)
	}
	srv.AddTool(mrtr.Tool{Name: "hello"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("Hello, world!"), nil
	}))
	res, err := mrtrtest.NewClient(srv).CallTool(context.Background(), "hello", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output: Hello, world!
}

var nameSchema = &mrtr.ElicitSchema{Type: "object",
	Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}, Required: []string{"name"}}

// A handler that asks in straight-line code: the first run ends at the
// ask, whose error the handler returns; the client answers, and the
// handler runs again from the top, where the ask returns the answer.
func ExampleElicit() {
	srv, _ := mrtr.New("greeter", "1.0.0")
	srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		who, err := mrtr.Elicit(ctx, req, "name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: nameSchema})
		if err != nil {
			return nil, err
		}
		if who.Action != mrtr.Accepted {
			return mrtr.TextResult("Hello, stranger."), nil
		}
		return mrtr.TextResult(fmt.Sprintf("Hello, %v!", who.Content["name"])), nil
	}))
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, _ := c.CallTool(context.Background(), "greet", nil)
	fmt.Println(res.Text(), "after", res.Rounds, "round")
	// Output: Hello, Ada! after 1 round
}

// Two independent questions go to the client in one round: ask both,
// then Check their errors.
func ExampleCheck() {
	srv, _ := mrtr.New("both", "1.0.0")
	srv.AddTool(mrtr.Tool{Name: "both"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		who, err1 := mrtr.Elicit(ctx, req, "name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: nameSchema})
		roots, err2 := mrtr.ListRoots(ctx, req, "roots")
		if err := mrtr.Check(err1, err2); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("%v works in %s", who.Content["name"], roots.Roots[0].URI)), nil
	}))
	c := mrtrtest.NewClient(srv,
		mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.WithRoots(mrtr.Root{URI: "file:///home/ada"}))
	res, _ := c.CallTool(context.Background(), "both", nil)
	fmt.Println(res.Text())
	fmt.Println("asked:", res.Asked)
	// Output:
	// Ada works in file:///home/ada
	// asked: [[name roots]]
}

// A value that may differ between runs (here a counter standing for the
// clock or a read) is computed once with Memo and sealed into the call's
// state: every later run of the call sees the same value.
func ExampleMemo() {
	srv, _ := mrtr.New("memo", "1.0.0")
	calls := 0
	srv.AddTool(mrtr.Tool{Name: "ticket"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		n, err := mrtr.Memo(ctx, req, "ticket", func(context.Context) (int, error) {
			calls++
			return 1000 + calls, nil
		})
		if err != nil {
			return nil, err
		}
		if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint("ticket ", n)), nil
	}))
	res, _ := mrtrtest.NewClient(srv, mrtrtest.WithRoots(mrtr.Root{URI: "file:///"})).CallTool(context.Background(), "ticket", nil)
	fmt.Println(res.Text(), "computed", calls, "time")
	// Output: ticket 1001 computed 1 time
}
