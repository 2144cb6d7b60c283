package mrtr

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// render is the one result encoder: every result the Server sends,
// server/discover included, goes through it. It encodes body (a JSON
// object) with resultType first, then the cache hint when the result is
// cacheable, then _meta: the server's identity merged with the handler's
// own _meta.
func (s *Server) render(resultType string, body any, meta Object, hint *discover.Hint) (json.RawMessage, *Error) {
	return s.renderInto(nil, resultType, body, meta, hint)
}

// resultBufs holds the buffers a call's own result is rendered into
// (renderCall), handed back by Response.Release, and those a round's
// token is sealed into before it is copied into the result. A new one is
// empty, so that a transport that never releases pays for no more than
// the result.
var resultBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledResult is the largest result buffer kept for reuse.
const maxPooledResult = 16 << 10

// putResultBuf hands bp back to resultBufs, unless it grew too large to
// keep.
func putResultBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledResult {
		resultBufs.Put(bp)
	}
}

// renderCall is render for what the call c answers with: the result goes
// into a pooled buffer, which c remembers so that the Response that
// carries it can hand it back (Response.Release).
func (s *Server) renderCall(c *call, resultType string, body any, meta Object, hint *discover.Hint) (json.RawMessage, *Error) {
	bp := resultBufs.Get().(*[]byte)
	out, err := s.renderInto(*bp, resultType, body, meta, hint)
	if err != nil {
		putResultBuf(bp)
		return nil, err
	}
	*bp = out
	c.result = bp
	return out, nil
}

// renderInto is render into dst's memory (a new buffer when dst is nil),
// grown as needed.
func (s *Server) renderInto(dst []byte, resultType string, body any, meta Object, hint *discover.Hint) (json.RawMessage, *Error) {
	var out []byte
	if m, ok := body.(memberAppender); ok {
		size := 256 + len(s.infoMeta)
		if h, ok := body.(interface{ sizeHint() int }); ok {
			size = 64 + len(s.infoMeta) + h.sizeHint()
		}
		out = slices.Grow(dst[:0], size)
		out = append(out, `{"resultType":"`...)
		out = append(out, resultType...)
		out = append(out, `",`...)
		var err error
		if out, err = m.appendMembers(out); err != nil {
			return nil, s.internal("encoding a result failed", err, nil)
		}
	} else {
		var b []byte
		if raw, ok := body.(json.RawMessage); ok {
			b = raw
		} else {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return nil, s.internal("encoding a result failed", err, nil)
			}
		}
		out = slices.Grow(dst[:0], len(b)+len(s.infoMeta)+64)
		out = append(out, `{"resultType":"`...)
		out = append(out, resultType...)
		out = append(out, '"')
		if len(b) > 2 {
			out = append(out, ',')
			out = append(out, b[1:len(b)-1]...)
		}
	}
	if hint != nil {
		out = append(out, `,"ttlMs":`...)
		out = strconv.AppendInt(out, hint.TTLMs, 10)
		out = append(out, `,"cacheScope":"`...)
		out = append(out, hint.CacheScope...)
		out = append(out, '"')
	}
	if _, ok := meta[wire.MetaServerInfo]; ok {
		// The server's identity is the framework's; copy rather than
		// change the handler's map, which may be shared.
		cp := make(Object, len(meta))
		for k, v := range meta {
			if k != wire.MetaServerInfo {
				cp[k] = v
			}
		}
		meta = cp
	}
	if len(meta) > 0 || s.infoMeta != nil {
		out = append(out, `,"_meta":{`...)
		out = append(out, s.infoMeta...)
		if len(meta) > 0 {
			mb, err := json.Marshal(meta)
			if err != nil {
				return nil, s.internal("encoding a result's _meta failed", err, nil)
			}
			if s.infoMeta != nil {
				out = append(out, ',')
			}
			out = append(out, mb[1:len(mb)-1]...)
		}
		out = append(out, '}')
	}
	return append(out, '}'), nil
}

// hint is the cache hint of a result of kind k served to principal. With
// no scope configured, a result served to an authenticated principal, or
// by a server whose entries depend on the caller (WithVisibility), is
// private: it may depend on who asked.
func (s *Server) hint(k discover.CacheKind, principal string) discover.Hint {
	h := s.desc.Cache.Hint(k)
	if s.desc.Cache.Scope == "" && (principal != "" || s.visible != nil) {
		h.CacheScope = discover.Private
	}
	return h
}

// discoverResult is the body of server/discover.
type discoverResult struct {
	SupportedVersions []string              `json:"supportedVersions"`
	Capabilities      discover.Capabilities `json:"capabilities"`
	Instructions      string                `json:"instructions,omitempty"`
}

// renderDiscover renders server/discover for the given capabilities and
// principal.
func (s *Server) renderDiscover(caps discover.Capabilities, principal string) (json.RawMessage, *Error) {
	h := s.hint(discover.CacheDiscover, principal)
	return s.render(wire.ResultComplete, &discoverResult{
		SupportedVersions: s.desc.SupportedVersions(),
		Capabilities:      caps,
		Instructions:      s.desc.Instructions,
	}, nil, &h)
}

func (s *Server) serveDiscover(_ context.Context, c *call) (json.RawMessage, *Error) {
	if s.visible != nil {
		return s.renderDiscover(s.capabilitiesFor(c.in), c.in.Principal)
	}
	if c.in.Principal == "" {
		// The anonymous answer depends only on the registries: it is
		// rendered when they change.
		if b := s.discovered.Load(); b != nil {
			return *b, nil
		}
	}
	return s.renderDiscover(*s.advertised(), c.in.Principal)
}

// capabilitiesFor returns what the server advertises to the caller of in
// under WithVisibility: a kind of entry the caller sees none of is left
// out.
func (s *Server) capabilitiesFor(in *Inbound) discover.Capabilities {
	caps := *s.advertised()
	s.mu.RLock()
	defer s.mu.RUnlock()
	seesAny := func(names []string, kinds ...string) bool {
		for _, n := range names {
			for _, k := range kinds {
				if s.sees(in, k, n) {
					return true
				}
			}
		}
		return false
	}
	if !seesAny(s.tools.names, KindTool) {
		caps.Tools = nil
	}
	if !seesAny(s.prompts.names, KindPrompt) {
		caps.Prompts = nil
	}
	if !seesAny(s.resources.names, KindResource) && !seesAny(s.templates.names, KindResourceTemplate) {
		caps.Resources = nil
	}
	return caps
}
