package mrtr

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
)

// ListenFilter is a member of the subscriptions/listen filter
// (params.notifications) that an extension adds, such as the Tasks
// extension's taskIds: the listener asks for it, the acknowledgement
// names what was honoured, and the extension's notifications reach the
// stream, tagged with the listen request's subscription id like the core
// ones.
type ListenFilter struct {
	// Member is the filter member's name, such as "taskIds".
	Member string
	// Extension is the extension a listen request must declare in its
	// clientCapabilities to ask for Member (-32021 otherwise); "" for
	// none.
	Extension string
	// Open starts the member for one listener: value is the member as
	// sent. It returns what the acknowledgement reports as honoured
	// (nil: the member is left out), and the notifications to send until
	// ctx ends (nil: none). An *Error refuses the listen request.
	Open func(ctx context.Context, req *MethodRequest, value json.RawMessage) (honoured any, notes <-chan Notification, err error)
}

// Notification is one notification an extension sends on a listen
// stream. The Server adds _meta with the subscription id to Params, which
// must encode as a JSON object.
type Notification struct {
	Method string
	Params any
}

var memberRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// AddListenFilter registers an extension's member of the
// subscriptions/listen filter. Listening is then served even when the
// server advertises no list changes.
func (s *Server) AddListenFilter(f ListenFilter) error {
	if !memberRE.MatchString(f.Member) || f.Open == nil {
		return fmt.Errorf("mrtr: listen filter %q: a member name and Open are required", f.Member)
	}
	switch f.Member {
	case "toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions":
		return fmt.Errorf("mrtr: listen filter %q is a core member", f.Member)
	}
	if f.Extension != "" && !extensionIDRE.MatchString(f.Extension) {
		return fmt.Errorf("mrtr: listen filter %q: extension id %q is not of the form prefix/name", f.Member, f.Extension)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.listenFilters {
		if g.Member == f.Member {
			return fmt.Errorf("mrtr: listen filter %q is already registered", f.Member)
		}
	}
	s.listenFilters = append(s.listenFilters, f)
	return nil
}

func (s *Server) hasListenFilters() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.listenFilters) > 0
}

// openListenFilters starts the extension members of a listen filter:
// it returns the honoured values by member and the notification channels.
func (s *Server) openListenFilters(ctx context.Context, c *call, raw json.RawMessage) (map[string]any, []<-chan Notification, *Error) {
	s.mu.RLock()
	filters := s.listenFilters
	s.mu.RUnlock()
	if len(filters) == 0 {
		return nil, nil, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil, nil, InvalidParamsError("subscriptions/listen needs params.notifications, a subscription filter object")
	}
	var honoured map[string]any
	var chans []<-chan Notification
	req := &MethodRequest{Method: c.method, Params: c.in.Message.Params, Meta: c.meta, Principal: c.in.Principal, Token: c.in.Token}
	for _, f := range filters {
		v, ok := members[f.Member]
		if !ok || isAbsent(v) {
			continue
		}
		if f.Extension != "" && !c.meta.Declares(f.Extension) {
			c.stage = StageCapability
			return nil, nil, missingExtension(f.Extension)
		}
		h, ch, err := f.Open(ctx, req, v)
		if err != nil {
			if e, ok := err.(*Error); ok {
				return nil, nil, e
			}
			return nil, nil, s.internal("opening a listen filter failed", err, c)
		}
		if h != nil {
			if honoured == nil {
				honoured = map[string]any{}
			}
			honoured[f.Member] = h
		}
		if ch != nil {
			chans = append(chans, ch)
		}
	}
	return honoured, chans, nil
}
