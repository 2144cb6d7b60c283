package suite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// Defaults that fit mrtrkit's conformance fixture server
// (conformance/server). They apply when Config.Tool is empty.
const (
	// DefaultTool takes a "message" argument and asks for an account by
	// form elicitation (key "account") on its first call.
	DefaultTool = "test_elicitation"
	// DefaultArgs are the arguments of DefaultTool.
	DefaultArgs = `{"message":"mrtrcheck: please enter any account details"}`
	// DefaultAltArgs differ from DefaultArgs in the message only.
	DefaultAltArgs = `{"message":"mrtrcheck: a different request"}`
	// DefaultOtherTool is the fixture server's twin of DefaultTool: the same
	// input schema and behaviour under another name, so a cross-tool replay
	// differs from the original call in the tool name only.
	DefaultOtherTool = "test_elicitation_twin"
)

// DefaultLegacyRounds is how many rounds of server-to-client requests the
// legacy scenarios follow in one call before they cancel it.
const DefaultLegacyRounds = 3

// maxLegacyRounds bounds Config.LegacyRounds.
const maxLegacyRounds = 50

// LegacyTool is a tool the legacy scenarios call on a session of the
// initialize era, with its arguments.
type LegacyTool struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"arguments,omitempty"`
}

// DefaultLegacyTools are the fixture server's tools the legacy scenarios
// call when Config.LegacyTools is empty and Config.Tool is too: one round
// of form elicitation, three rounds (elicitation, sampling, roots; a
// fixture of the interop tests, skipped by a fixture that does not list
// it), two rounds of form elicitation, one round of three requests
// (elicitation, sampling, roots), and one round of sampling.
func DefaultLegacyTools() []LegacyTool {
	return []LegacyTool{
		{Name: DefaultTool, Args: json.RawMessage(DefaultArgs)},
		{Name: "test_three_rounds", Args: json.RawMessage(`{}`)},
		{Name: "test_input_required_result_multi_round", Args: json.RawMessage(`{}`)},
		{Name: "test_input_required_result_multiple_inputs", Args: json.RawMessage(`{}`)},
		{Name: "test_sampling", Args: json.RawMessage(`{"prompt":"mrtrcheck: say hello"}`)},
	}
}

// DefaultCapabilities are the client capabilities the suite declares when
// Config.Capabilities is empty: form elicitation, sampling and roots.
const DefaultCapabilities = `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`

// Defaults of the limits.
const (
	// DefaultTimeout bounds one HTTP exchange.
	DefaultTimeout = 10 * time.Second
	// DefaultSlowAfter is how long a server may take to refuse a huge
	// requestState before the refusal counts as not prompt.
	DefaultSlowAfter = 5 * time.Second
	// DefaultHugeStateBytes is the length of the huge requestState: 1 MiB.
	DefaultHugeStateBytes = 1 << 20
)

// Config says which server to check and how.
type Config struct {
	// URL is the MCP endpoint, such as http://127.0.0.1:3001/mcp.
	URL string

	// Tool is a tool that answers its first call (with Args, no
	// requestState) with input_required and a requestState. Empty means
	// the fixture defaults: DefaultTool, and DefaultArgs, DefaultAltArgs
	// and DefaultOtherTool where those are unset.
	Tool string
	// Args are Tool's arguments, a JSON object ({} when empty).
	Args json.RawMessage
	// AltArgs are other arguments Tool accepts, for the replay with other
	// arguments. Empty means derived from Args: the first string member
	// (in name order) gets a suffix, or else the first number grows by
	// one, or else a member "mrtrcheck" is added.
	AltArgs json.RawMessage
	// OtherTool is a second tool for the cross-tool replay. It must answer
	// OtherArgs, without requestState, with a result rather than an error.
	// Empty (with Tool set) leaves that scenario not run.
	OtherTool string
	// OtherArgs are sent to OtherTool. Empty means Args, so that the
	// replay differs in the tool name only.
	OtherArgs json.RawMessage

	// Token is sent as "Authorization: Bearer <Token>" on every request
	// when set. OtherToken, a second principal's token, is used only by
	// the cross-principal replay, which runs only when both are set.
	Token, OtherToken string

	// Capabilities are the client capabilities declared in every
	// request's _meta, a JSON object. Empty means DefaultCapabilities.
	Capabilities json.RawMessage

	// HTTPClient sends the requests. Nil means a client of its own that
	// does not follow redirects. A client given here should not follow
	// them either: a redirect is evidence.
	HTTPClient *http.Client
	// Timeout bounds one exchange (DefaultTimeout when zero).
	Timeout time.Duration
	// SlowAfter is how long a refusal of the huge requestState may take
	// (DefaultSlowAfter when zero).
	SlowAfter time.Duration
	// HugeStateBytes is the length of the huge requestState
	// (DefaultHugeStateBytes when zero).
	HugeStateBytes int

	// Answers are the answers to send to the server's questions, by input
	// key: each value is the exact answer object (an elicitation result
	// such as {"action":"accept","content":{...}}, a sampling result such as
	// {"role":"assistant","content":{"type":"text","text":"..."},"model":"m"},
	// or a roots result). Keys the server does not ask are not sent. The
	// suite makes up answers to the other keys from the questions
	// themselves; a tool that validates what a model or a user says (a JSON
	// list of paths, say) needs its answers here.
	Answers map[string]json.RawMessage

	// Strict counts a NotRun of the state.*, replay.* and answers.*
	// scenarios as a failure (informational scenarios excepted, and
	// state.forged when the state is opaque, since an opaque state cannot
	// be forged): the security properties those scenarios check were then
	// not checked.
	Strict bool

	// LegacyTools are the tools the legacy scenarios call on a session of
	// the initialize era (MCP 2025-11-25), when the server serves one:
	// tools that ask for input, in one round or several (a round may also
	// be state-only, which the legacy client never sees). Tools the server
	// does not list are skipped. Empty means DefaultLegacyTools with the
	// fixture defaults (Tool empty), else Tool with Args.
	LegacyTools []LegacyTool
	// LegacyRounds is how many rounds of server-to-client requests the
	// legacy scenarios follow in one call; at the next round they cancel
	// the call (DefaultLegacyRounds when zero).
	LegacyRounds int

	// Select, when set, chooses the scenarios to run by ID. The baseline
	// runs whenever a selected scenario depends on it.
	Select func(id string) bool
}

// normalize checks c and fills in its defaults.
func (c Config) normalize() (Config, error) {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return c, errors.New("the URL of the MCP endpoint is required")
	case err != nil:
		return c, fmt.Errorf("URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return c, fmt.Errorf("URL %q: the scheme must be http or https", c.URL)
	case u.Host == "":
		return c, fmt.Errorf("URL %q has no host", c.URL)
	}
	if len(c.LegacyTools) == 0 {
		if c.Tool == "" {
			c.LegacyTools = DefaultLegacyTools()
		} else {
			c.LegacyTools = []LegacyTool{{Name: c.Tool, Args: c.Args}}
		}
	}
	if c.Tool == "" {
		c.Tool = DefaultTool
		if len(c.Args) == 0 {
			c.Args = json.RawMessage(DefaultArgs)
		}
		if len(c.AltArgs) == 0 {
			c.AltArgs = json.RawMessage(DefaultAltArgs)
		}
		if c.OtherTool == "" {
			c.OtherTool = DefaultOtherTool
		}
	}
	if len(c.Args) == 0 {
		c.Args = json.RawMessage(`{}`)
	}
	if err := checkObject("arguments", c.Args); err != nil {
		return c, err
	}
	if len(c.AltArgs) == 0 {
		if c.AltArgs, err = deriveAltArgs(c.Args); err != nil {
			return c, err
		}
	}
	if err := checkObject("alternative arguments", c.AltArgs); err != nil {
		return c, err
	}
	if sameJSON(c.Args, c.AltArgs) {
		return c, errors.New("the alternative arguments must differ from the arguments")
	}
	if len(c.OtherArgs) == 0 {
		c.OtherArgs = c.Args
	}
	if err := checkObject("other tool's arguments", c.OtherArgs); err != nil {
		return c, err
	}
	if c.OtherTool != "" && c.OtherTool == c.Tool {
		return c, errors.New("the other tool must not be the tool itself")
	}
	if len(c.Capabilities) == 0 {
		c.Capabilities = json.RawMessage(DefaultCapabilities)
	}
	if err := checkObject("client capabilities", c.Capabilities); err != nil {
		return c, err
	}
	for name, tok := range map[string]string{"token": c.Token, "other token": c.OtherToken} {
		for i := 0; i < len(tok); i++ {
			if tok[i] < 0x21 || tok[i] > 0x7e {
				return c, fmt.Errorf("the %s may hold only visible ASCII characters", name)
			}
		}
	}
	if len(c.Answers) > 0 {
		given := make(map[string]json.RawMessage, len(c.Answers))
		for k, v := range c.Answers {
			if k == "" {
				return c, errors.New("an answer has an empty input key")
			}
			if err := checkObject(fmt.Sprintf("answer to %q", k), v); err != nil {
				return c, err
			}
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return c, err
			}
			given[k] = b.Bytes()
		}
		c.Answers = given
	}
	if c.Token != "" && c.Token == c.OtherToken {
		return c, errors.New("the two principals need different tokens")
	}
	switch {
	case c.LegacyRounds < 0 || c.LegacyRounds > maxLegacyRounds:
		return c, fmt.Errorf("the legacy round cap must be between 1 and %d", maxLegacyRounds)
	case c.LegacyRounds == 0:
		c.LegacyRounds = DefaultLegacyRounds
	}
	tools := make([]LegacyTool, len(c.LegacyTools))
	for i, t := range c.LegacyTools {
		if t.Name == "" {
			return c, errors.New("a legacy tool has no name")
		}
		if len(t.Args) == 0 {
			t.Args = json.RawMessage(`{}`)
		}
		if err := checkObject(fmt.Sprintf("arguments of legacy tool %q", t.Name), t.Args); err != nil {
			return c, err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, t.Args); err != nil {
			return c, err
		}
		t.Args = b.Bytes()
		tools[i] = t
	}
	c.LegacyTools = tools
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.SlowAfter <= 0 {
		c.SlowAfter = DefaultSlowAfter
	}
	if c.HugeStateBytes <= 0 {
		c.HugeStateBytes = DefaultHugeStateBytes
	}
	// Compact the JSON values so that every request spells them alike.
	for _, p := range []*json.RawMessage{&c.Args, &c.AltArgs, &c.OtherArgs, &c.Capabilities} {
		var b bytes.Buffer
		if err := json.Compact(&b, *p); err != nil {
			return c, err
		}
		*p = b.Bytes()
	}
	return c, nil
}

// checkObject reports whether raw is one JSON object.
func checkObject(what string, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("the %s are not valid JSON: %w", what, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the %s must be a JSON object", what)
	}
	return nil
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// deriveAltArgs returns arguments that differ from args in one value.
func deriveAltArgs(args json.RawMessage) (json.RawMessage, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, errors.New("the arguments must be a JSON object")
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	changed := false
	for _, k := range names {
		if s, ok := obj[k].(string); ok {
			obj[k] = s + " (mrtrcheck)"
			changed = true
			break
		}
	}
	for i := 0; !changed && i < len(names); i++ {
		n, ok := obj[names[i]].(json.Number)
		if !ok {
			continue
		}
		if v, err := n.Int64(); err == nil {
			obj[names[i]] = json.Number(strconv.FormatInt(v+1, 10))
		} else if f, err := n.Float64(); err == nil {
			obj[names[i]] = f + 1
		} else {
			continue
		}
		changed = true
	}
	if !changed {
		obj["mrtrcheck"] = "alt"
	}
	return json.Marshal(obj)
}
