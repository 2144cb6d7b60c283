package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// initializeParams are the params of initialize, as the initialize era
// defines them.
type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

// clientCaps is the part of a 2025 ClientCapabilities the bridge uses.
type clientCaps struct {
	Sampling *struct {
		Context json.RawMessage `json:"context"`
		Tools   json.RawMessage `json:"tools"`
	} `json:"sampling"`
	Elicitation *struct {
		Form json.RawMessage `json:"form"`
		URL  json.RawMessage `json:"url"`
	} `json:"elicitation"`
	Roots json.RawMessage `json:"roots"`
}

func (c clientCaps) bits() uint8 {
	var b uint8
	if c.Sampling != nil {
		b |= capSampling
		if len(c.Sampling.Tools) > 0 && string(c.Sampling.Tools) != "null" {
			b |= capSamplingTools
		}
		if len(c.Sampling.Context) > 0 && string(c.Sampling.Context) != "null" {
			b |= capSamplingContext
		}
	}
	if e := c.Elicitation; e != nil {
		form := len(e.Form) > 0 && string(e.Form) != "null"
		url := len(e.URL) > 0 && string(e.URL) != "null"
		if form || !url {
			b |= capElicitForm // {} means form
		}
		if url {
			b |= capElicitURL
		}
	}
	if len(c.Roots) > 0 && string(c.Roots) != "null" {
		b |= capRoots
	}
	return b
}

// maxClientInfo bounds the client info a session id carries.
const maxClientInfo = 1024

// Initialize answers the initialize request msg, presented by caller (nil
// when anonymous; the returned session must be Released, as one from
// Engine.Session):
// it negotiates the version (the client's when it is served, else the
// newest served), seals a new session and returns it with the response
// to write. The result is rendered from the Server's description and its
// advertised capabilities. Bad params are answered with a -32602 response
// and no session; ErrBusy means the process holds all the sessions it may.
//
// Anonymous sessions made so count against one bound for all; a host that
// knows who is at the other end calls InitializeFrom.
func (e *Engine) Initialize(caller *mrtr.TokenInfo, msg *mrtr.Message) (*Session, *mrtr.Response, error) {
	return e.InitializeFrom(caller, "", msg)
}

// InitializeFrom is Initialize for a request from peer (the client's IP
// address on Streamable HTTP): an anonymous session counts against the
// per-principal bounds (WithMaxSessionsPerPrincipal,
// WithMaxCallsPerPrincipal) of the peer it was initialized from, whatever
// peer uses it later, and the returned session passes peer to the Server
// (Session.SetPeer). ErrTooManySessions means the caller holds as many
// sessions as it may, all busy.
func (e *Engine) InitializeFrom(caller *mrtr.TokenInfo, peer string, msg *mrtr.Message) (*Session, *mrtr.Response, error) {
	principal := subject(caller)
	var p initializeParams
	if msg.IsNotification() {
		return nil, nil, nil
	}
	if json.Unmarshal(msg.Params, &p) != nil || p.ProtocolVersion == "" || len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return nil, failure(msg, mrtr.CodeInvalidParams, "initialize needs params with a protocolVersion, capabilities and clientInfo"), nil
	}
	var caps clientCaps
	if json.Unmarshal(p.Capabilities, &caps) != nil {
		return nil, failure(msg, mrtr.CodeInvalidParams, "initialize: capabilities must be a ClientCapabilities object"), nil
	}
	version := e.versions[0]
	if slices.Contains(e.versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	f := fixed{Version: version, Caps: caps.bits(), Epoch: e.epoch}
	if principal == "" {
		f.Peer = peer
	}
	if len(p.ClientInfo) > 0 && p.ClientInfo[0] == '{' && len(p.ClientInfo) <= maxClientInfo {
		var info discover.Implementation
		if json.Unmarshal(p.ClientInfo, &info) == nil && info.Name != "" {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // escaping could grow it six-fold
			if enc.Encode(info) == nil && b.Len() <= maxClientInfo {
				raw := json.RawMessage(bytes.TrimSpace(b.Bytes()))
				f.Client = &raw
			}
		}
	}
	var token, sid string
	var claims state.Claims
	for try := 0; ; try++ {
		var err error
		token, sid, err = e.mint(principal, f)
		if err == nil && len(token) > maxSessionID {
			err = errors.New("session id too long")
		}
		if err == nil {
			claims, err = e.codec.Open(token)
		}
		if err != nil {
			e.log.Error("legacy: sealing a session id failed", "err", err)
			return nil, failure(msg, mrtr.CodeInternalError, "Internal error"), nil
		}
		// A session issued in the very millisecond of its caller's cut
		// (see maxRevokedFactor) would be refused at once: it is issued
		// again a moment later.
		cut, ok := e.cutOf(ownerKey(claims, f))
		if !ok || claims.IssuedAt.After(cut) {
			break
		}
		if try == 3 {
			e.log.Error("legacy: a session id cannot be issued after its caller's deletions")
			return nil, failure(msg, mrtr.CodeInternalError, "Internal error"), nil
		}
		time.Sleep(time.Millisecond)
	}
	x, err := e.extras(claims, f)
	if err != nil {
		return nil, nil, err
	}
	x.mu.Lock()
	x.nextLeg = 0 // a new session has used no leg id
	x.mu.Unlock()
	res, err := e.initializeResult(version)
	if err != nil {
		e.log.Error("legacy: rendering initialize failed", "err", err)
		return nil, failure(msg, mrtr.CodeInternalError, "Internal error"), nil
	}
	s := &Session{e: e, id: token, sid: sid, fixed: f, principal: principal, token: caller, peer: peer, x: x, issued: claims.IssuedAt, expires: claims.ExpiresAt}
	return s, result(msg, res), nil
}

// initializeResult renders the result of initialize from the one
// description: the negotiated version, the advertised capabilities in the
// shape of the initialize era, the server's identity at the top level and
// the instructions.
func (e *Engine) initializeResult(version string) (json.RawMessage, error) {
	desc := e.srv.Description()
	r, err := desc.Initialize(version)
	if err != nil {
		return nil, err
	}
	r.Capabilities = e.srv.Capabilities()
	r.Capabilities.Extensions = nil // a 2026-07-28 notion
	return json.Marshal(r)
}
