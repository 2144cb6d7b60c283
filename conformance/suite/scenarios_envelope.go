package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// The envelope scenarios: duplicate members, the case of _meta keys and
// members, and batches.

func duplicateMethod(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe(`tools/list with "method":"tools/list" twice`)
	p.body = object(
		m("jsonrpc", str("2.0")),
		m("id", json.RawMessage(fmt.Sprint(p.id))),
		m("method", str("tools/list")),
		m("method", str("tools/list")),
		m("params", object(m("_meta", r.meta(ProtocolVersion)))),
	)
	return expectRefusal(r.send(ctx, p), ctl)
}

func duplicateMeta(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with params._meta twice, both valid")
	second := client.RawMeta(ProtocolVersion, json.RawMessage(`{}`), client.Implementation{Name: "mrtrcheck-second-meta", Version: "1"})
	p.body = envelope(p.id, "tools/list", object(m("_meta", r.meta(ProtocolVersion)), m("_meta", second)))
	return expectRefusal(r.send(ctx, p), ctl)
}

func metaKeyCase(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list whose _meta spells the required keys …/protocolversion and …/clientcapabilities")
	meta := object(
		m(strings.ToLower(wire.MetaProtocolVersion), str(ProtocolVersion)),
		m(strings.ToLower(wire.MetaClientCapabilities), r.cfg.Capabilities),
	)
	p.body = envelope(p.id, "tools/list", object(m("_meta", meta)))
	return expectRefusal(r.send(ctx, p), ctl)
}

func metaMemberCase(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list whose params hold _META instead of _meta")
	p.body = envelope(p.id, "tools/list", object(m("_META", r.meta(ProtocolVersion))))
	return expectRefusal(r.send(ctx, p), ctl)
}

func batch(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("a batch: [tools/list]")
	p.body = append(append([]byte{'['}, p.body...), ']')
	rep := r.send(ctx, p)
	if !rep.isRPCError() && bytes.HasPrefix(bytes.TrimSpace([]byte(rep.Body)), []byte("[")) {
		return fail("the batch was processed: the body is an array of responses", ctl, rep.Evidence)
	}
	return expectCode(rep, -32600, 0, ctl)
}
