package client

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// ListenFilter says which notifications a Listen asks for; everything is
// opt-in.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`      // notifications/tools/list_changed
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`    // notifications/prompts/list_changed
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`  // notifications/resources/list_changed
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"` // notifications/resources/updated of these URIs
	// TaskIDs asks for notifications/tasks, each carrying the new state
	// of one of these tasks (the Tasks extension, declared on the listen
	// request when TaskIDs is set). They are a hint: the server delivers
	// them at most once, so keep polling with GetTask or AwaitTask.
	TaskIDs []string `json:"taskIds,omitempty"`
}

// Listen opens a subscriptions/listen stream and passes each of its
// notifications to fn (the first is
// notifications/subscriptions/acknowledged, with what the server
// honours) until ctx ends (Listen then returns ctx.Err()) or the server
// ends the subscription gracefully (nil). A stream that breaks without
// that end is opened again, after a wait that doubles from 250ms up to
// 30s and starts over once a stream is acknowledged. A JSON-RPC error
// from the server ends Listen with that error. It needs a server of
// 2026-07-28: a 2025-11-25 session sends its notifications on its own
// stream, to OnNotification.
func (c *Client) Listen(ctx context.Context, filter ListenFilter, fn func(Notification)) error {
	if c.Legacy() {
		return &Error{Server: c.server, Method: wire.MethodSubscriptionsListen, Err: errors.New("a 2025-11-25 session has no subscriptions/listen; its notifications go to OnNotification")}
	}
	wait := 250 * time.Millisecond
	for {
		var acked atomic.Bool
		co := &callOpts{onNote: func(m *message) {
			switch {
			case m.Method == "notifications/subscriptions/acknowledged":
				acked.Store(true)
			case strings.HasSuffix(m.Method, "/list_changed"), m.Method == "notifications/resources/updated",
				m.Method == wire.NotifyTasks && len(filter.TaskIDs) > 0:
			default:
				return // request-scoped notifications never travel here
			}
			fn(Notification{Method: m.Method, Params: m.Params})
		}, task: len(filter.TaskIDs) > 0}
		_, err := c.call(ctx, wire.MethodSubscriptionsListen, "", []member{{"notifications", mustJSON(filter)}}, nil, co, 0)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case CodeOf(err) != 0:
			return err
		}
		if acked.Load() {
			wait = 250 * time.Millisecond
		}
		if sleep(ctx, wait) != nil {
			return ctx.Err()
		}
		wait = min(wait*2, 30*time.Second)
	}
}
