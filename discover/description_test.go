package discover

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleDescription builds the Description whose pieces reproduce the
// official server/discover example in testdata/discover_example.json.
func exampleDescription() *Description {
	return &Description{
		Server: Implementation{Name: "ExampleServer", Version: "1.0.0"},
		Capabilities: Capabilities{
			Tools:     &ListChanged{},
			Resources: &ResourcesCapability{},
		},
		Instructions: "This server provides weather and resource utilities.",
	}
}

// readExample returns the members of the official server/discover example.
func readExample(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/discover_example.json")
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// members decodes the JSON object rendered from v into its members.
func members(t *testing.T, v any) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(marshal(t, v)), &m))
	return m
}

// TestPiecesMatchExample proves that discover can reproduce the official
// server/discover example: every member of the example other than
// resultType (which package mrtr adds to every result) equals the piece
// discover provides for it.
func TestPiecesMatchExample(t *testing.T) {
	example := readExample(t)
	d := exampleDescription()
	require.NoError(t, d.Validate())

	covered := map[string]bool{}
	check := func(member, got string) {
		t.Helper()
		want, ok := example[member]
		if assert.True(t, ok, "example has member %q", member) {
			assert.JSONEq(t, string(want), got, member)
		}
		covered[member] = true
	}

	check("supportedVersions", marshal(t, d.SupportedVersions()))
	check("capabilities", marshal(t, d.Capabilities))
	check("instructions", marshal(t, d.Instructions))
	hint := members(t, d.Cache.Hint(CacheDiscover))
	assert.ElementsMatch(t, []string{"ttlMs", "cacheScope"}, slices.Collect(maps.Keys(hint)))
	for member, got := range hint {
		check(member, string(got))
	}
	check("_meta", marshal(t, d.ServerInfoMeta()))

	var rest []string
	for member := range example {
		if !covered[member] {
			rest = append(rest, member)
		}
	}
	assert.Equal(t, []string{"resultType"}, rest, "only resultType is left to mrtr")
	assert.JSONEq(t, `"complete"`, string(example["resultType"]))
}

// TestPiecesGolden pins the pieces of a server/discover result that
// discover provides, for several descriptions.
func TestPiecesGolden(t *testing.T) {
	const exampleMeta = `{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}`
	tests := []struct {
		name     string
		edit     func(d *Description)
		versions []string
		caps     string
		hint     Hint
		meta     string // JSON of ServerInfoMeta; "null" when omitted
	}{
		{"minimal defaults", func(d *Description) {
			*d = Description{Server: Implementation{Name: "s", Version: "0.1.0"}}
		}, []string{LatestVersion}, `{}`, Hint{TTLMs: 3_600_000, CacheScope: Public},
			`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"0.1.0"}}`},
		{"omit server info", func(d *Description) { d.OmitServerInfo = true },
			[]string{LatestVersion}, `{"tools":{},"resources":{}}`, Hint{TTLMs: 3_600_000, CacheScope: Public},
			`null`},
		{"private scope", func(d *Description) { d.Cache.Scope = Private },
			[]string{LatestVersion}, `{"tools":{},"resources":{}}`, Hint{TTLMs: 3_600_000, CacheScope: Private},
			exampleMeta},
		{"no cache", func(d *Description) { d.Cache.Discover = NoCache },
			[]string{LatestVersion}, `{"tools":{},"resources":{}}`, Hint{TTLMs: 0, CacheScope: Public},
			exampleMeta},
		{"custom ttl and legacy versions", func(d *Description) {
			d.Cache.Discover = 10 * time.Minute
			d.LegacyVersions = []string{"2025-06-18", "2025-11-25"}
		}, []string{LatestVersion, "2025-06-18", "2025-11-25"}, `{"tools":{},"resources":{}}`,
			Hint{TTLMs: 600_000, CacheScope: Public}, exampleMeta},
		{"full implementation", func(d *Description) {
			d.Capabilities = Capabilities{Logging: &Empty{}}
			d.Server = Implementation{
				Name: "full", Version: "2.0.0", Title: "Full Server", Description: "Does everything.",
				WebsiteURL: "https://example.com",
				Icons: []Icon{
					{Src: "https://example.com/icon.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: ThemeLight},
					{Src: "https://example.com/icon.svg"},
				},
			}
		}, []string{LatestVersion}, `{"logging":{}}`, Hint{TTLMs: 3_600_000, CacheScope: Public},
			`{"io.modelcontextprotocol/serverInfo":{"name":"full","version":"2.0.0","title":"Full Server",
			"description":"Does everything.","websiteUrl":"https://example.com",
			"icons":[{"src":"https://example.com/icon.png","mimeType":"image/png","sizes":["48x48"],"theme":"light"},
			{"src":"https://example.com/icon.svg"}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := exampleDescription()
			tt.edit(d)
			require.NoError(t, d.Validate())
			assert.Equal(t, tt.versions, d.SupportedVersions())
			assert.JSONEq(t, tt.caps, marshal(t, d.Capabilities))
			assert.Equal(t, tt.hint, d.Cache.Hint(CacheDiscover))
			assert.JSONEq(t, tt.meta, marshal(t, d.ServerInfoMeta()))
		})
	}
}

// TestExampleShape checks the official example against the schema of the
// 2026-07-28 server/discover result: required keys, their JSON types, and
// no top-level serverInfo.
func TestExampleShape(t *testing.T) {
	example, err := os.ReadFile("testdata/discover_example.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(example, &m))

	for _, key := range []string{"resultType", "supportedVersions", "capabilities", "ttlMs", "cacheScope"} {
		assert.Contains(t, m, key, "required key")
	}
	assert.NotContains(t, m, "serverInfo", "no top-level serverInfo")
	assert.NotContains(t, m, "protocolVersion")
	for key := range m {
		assert.Contains(t, []string{"resultType", "supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta"}, key, "unexpected key")
	}
	assert.Equal(t, "complete", m["resultType"])
}

// TestPiecesShape checks the pieces discover renders against the schema of
// the matching members of a 2026-07-28 server/discover result.
func TestPiecesShape(t *testing.T) {
	d := exampleDescription()
	d.LegacyVersions = []string{"2025-11-25"}
	d.Cache = CachePolicy{Scope: Private, Discover: 90 * time.Second}
	d.Capabilities.Experimental = map[string]map[string]any{"x": nil}
	d.Capabilities.Extensions = map[string]map[string]any{"io.example/ext": nil}
	require.NoError(t, d.Validate())

	decode := func(v any) any {
		var out any
		require.NoError(t, json.Unmarshal([]byte(marshal(t, v)), &out))
		return out
	}

	versions, ok := decode(d.SupportedVersions()).([]any)
	require.True(t, ok, "supportedVersions is an array")
	require.NotEmpty(t, versions)
	for _, v := range versions {
		s, ok := v.(string)
		require.True(t, ok, "version is a string")
		assert.True(t, wellFormedVersion(s), s)
	}
	assert.Equal(t, LatestVersion, versions[0])

	caps, ok := decode(d.Capabilities).(map[string]any)
	require.True(t, ok, "capabilities is an object")
	for name, c := range caps {
		_, ok := c.(map[string]any)
		assert.True(t, ok, "capability %s is an object", name)
	}
	for _, name := range []string{"experimental", "extensions"} {
		entries, ok := caps[name].(map[string]any)
		require.True(t, ok, "%s is an object", name)
		for key, opts := range entries {
			_, ok := opts.(map[string]any)
			assert.True(t, ok, "%s.%s is an object", name, key)
		}
	}

	hint, ok := decode(d.Cache.Hint(CacheDiscover)).(map[string]any)
	require.True(t, ok, "hint is an object")
	ttl, ok := hint["ttlMs"].(float64)
	require.True(t, ok, "ttlMs is a number")
	assert.Equal(t, float64(int64(ttl)), ttl, "ttlMs is an integer")
	assert.Equal(t, 90_000.0, ttl)
	assert.Contains(t, []any{"public", "private"}, hint["cacheScope"])

	meta, ok := decode(d.ServerInfoMeta()).(map[string]any)
	require.True(t, ok, "_meta is an object")
	info, ok := meta[wire.MetaServerInfo].(map[string]any)
	require.True(t, ok, "serverInfo is an object")
	assert.IsType(t, "", info["name"])
	assert.IsType(t, "", info["version"])
}

// TestExampleMembersRoundTrip decodes the example's members into the types
// discover renders them from and checks they encode back unchanged.
func TestExampleMembersRoundTrip(t *testing.T) {
	example := readExample(t)

	var caps Capabilities
	require.NoError(t, json.Unmarshal(example["capabilities"], &caps))
	assert.NotNil(t, caps.Tools)
	assert.NotNil(t, caps.Resources)
	assert.JSONEq(t, string(example["capabilities"]), marshal(t, caps))

	var h Hint
	require.NoError(t, json.Unmarshal(example["ttlMs"], &h.TTLMs))
	require.NoError(t, json.Unmarshal(example["cacheScope"], &h.CacheScope))
	assert.Equal(t, Hint{TTLMs: 3_600_000, CacheScope: Public}, h)

	var meta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(example["_meta"], &meta))
	var info Implementation
	require.NoError(t, json.Unmarshal(meta[wire.MetaServerInfo], &info))
	assert.Equal(t, exampleDescription().Server, info)
	assert.JSONEq(t, string(meta[wire.MetaServerInfo]), marshal(t, info))
}

// TestPiecesShareNothing checks that what discover returns can be changed
// without changing the Description.
func TestPiecesShareNothing(t *testing.T) {
	d := exampleDescription()
	d.LegacyVersions = []string{"2025-11-25"}
	d.Server.Icons = []Icon{{Src: "a", Sizes: []string{"1x1"}}}

	v := d.SupportedVersions()
	v[0], v[1] = "changed", "changed"
	assert.Nil(t, d.Versions)
	assert.Equal(t, []string{"2025-11-25"}, d.LegacyVersions)
	assert.Equal(t, []string{LatestVersion, "2025-11-25"}, d.SupportedVersions())

	// Spare capacity in Versions is not written to.
	versions := make([]string, 1, 4)
	versions[0] = LatestVersion
	d.Versions = versions
	v = d.SupportedVersions()
	assert.Equal(t, []string{LatestVersion, "2025-11-25"}, v)
	v[0] = "changed"
	assert.Equal(t, []string{LatestVersion, ""}, versions[:2])
	assert.Equal(t, []string{"2025-11-25"}, d.LegacyVersions)

	m := d.ModernVersions()
	m[0] = "changed"
	assert.Equal(t, []string{LatestVersion}, d.Versions)

	info := d.ServerInfoMeta()[wire.MetaServerInfo].(Implementation)
	info.Icons[0].Sizes[0] = "changed"
	info.Icons[0].Src = "changed"
	assert.Equal(t, []Icon{{Src: "a", Sizes: []string{"1x1"}}}, d.Server.Icons)

	r, err := d.Initialize("2025-11-25")
	require.NoError(t, err)
	r.Capabilities.Tools.ListChanged = true
	r.Capabilities.Resources.Subscribe = true
	r.ServerInfo.Icons[0].Sizes[0] = "changed"
	assert.False(t, d.Capabilities.Tools.ListChanged)
	assert.False(t, d.Capabilities.Resources.Subscribe)
	assert.Equal(t, "1x1", d.Server.Icons[0].Sizes[0])
}

func TestServerInfoMeta(t *testing.T) {
	d := exampleDescription()
	assert.Equal(t, map[string]any{wire.MetaServerInfo: d.Server}, d.ServerInfoMeta())
	assert.JSONEq(t, `{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}`,
		marshal(t, d.ServerInfoMeta()))

	t.Run("fresh map each call", func(t *testing.T) {
		first := d.ServerInfoMeta()
		first["extra"] = true
		delete(first, wire.MetaServerInfo)
		assert.Equal(t, map[string]any{wire.MetaServerInfo: d.Server}, d.ServerInfoMeta())
	})

	t.Run("omitted", func(t *testing.T) {
		d := exampleDescription()
		d.OmitServerInfo = true
		assert.Nil(t, d.ServerInfoMeta())
		assert.Equal(t, "null", marshal(t, d.ServerInfoMeta()))
	})
}

func TestValidateEmptyDescription(t *testing.T) {
	err := (&Description{}).Validate()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Server.Name is required")
	assert.Contains(t, err.Error(), "Server.Version is required")
}

func TestSupportedVersions(t *testing.T) {
	d := &Description{}
	assert.Equal(t, []string{LatestVersion}, d.SupportedVersions())
	assert.True(t, d.Supports(LatestVersion))
	assert.False(t, d.Supports("2025-11-25"))

	d.Versions = []string{"2027-01-01", LatestVersion}
	d.LegacyVersions = []string{"2025-11-25"}
	assert.Equal(t, []string{"2027-01-01", LatestVersion, "2025-11-25"}, d.SupportedVersions())
	assert.True(t, d.Supports("2027-01-01"))
	assert.True(t, d.Supports(LatestVersion))
	assert.False(t, d.Supports("2025-11-25"), "legacy versions are not modern")
	assert.True(t, d.SupportsLegacy("2025-11-25"))
	assert.False(t, d.SupportsLegacy(LatestVersion))

	d.Versions = []string{}
	assert.Equal(t, []string{LatestVersion, "2025-11-25"}, d.SupportedVersions(), "empty Versions defaults")
}

func TestValidate(t *testing.T) {
	valid := func() *Description {
		return &Description{
			Server:         Implementation{Name: "s", Version: "1"},
			LegacyVersions: []string{"2025-11-25", "2025-06-18"},
		}
	}
	require.NoError(t, valid().Validate())

	tests := []struct {
		name string
		edit func(d *Description)
		msgs []string
	}{
		{"missing name", func(d *Description) { d.Server.Name = "" }, []string{"Server.Name is required"}},
		{"missing version", func(d *Description) { d.Server.Version = "" }, []string{"Server.Version is required"}},
		{"missing both", func(d *Description) { d.Server = Implementation{} },
			[]string{"Server.Name is required", "Server.Version is required"}},
		{"icon without src", func(d *Description) { d.Server.Icons = []Icon{{MIMEType: "image/png"}} },
			[]string{"Server.Icons[0].Src is required"}},
		{"icon bad theme", func(d *Description) { d.Server.Icons = []Icon{{Src: "x", Theme: "blue"}} },
			[]string{`Server.Icons[0].Theme "blue"`}},
		{"malformed version", func(d *Description) { d.Versions = []string{"2026-7-28"} },
			[]string{`Versions[0] "2026-7-28" is not a protocol version of the form YYYY-MM-DD`}},
		{"not a date", func(d *Description) { d.Versions = []string{"2026-02-30"} },
			[]string{`Versions[0] "2026-02-30" is not a protocol version`}},
		{"free text", func(d *Description) { d.LegacyVersions = []string{"latest"} },
			[]string{`LegacyVersions[0] "latest" is not a protocol version`}},
		{"empty version string", func(d *Description) { d.Versions = []string{""} },
			[]string{`Versions[0] "" is not a protocol version`}},
		{"duplicate modern", func(d *Description) { d.Versions = []string{LatestVersion, LatestVersion} },
			[]string{`Versions[1] "2026-07-28" is already listed in Versions`}},
		{"duplicate legacy", func(d *Description) { d.LegacyVersions = []string{"2025-11-25", "2025-11-25"} },
			[]string{`LegacyVersions[1] "2025-11-25" is already listed in LegacyVersions`}},
		{"legacy in modern list", func(d *Description) { d.Versions = []string{LatestVersion, "2025-11-25"} },
			[]string{`Versions[1] "2025-11-25" predates 2026-07-28`, `LegacyVersions[0] "2025-11-25" is already listed in Versions`}},
		{"old version as modern", func(d *Description) { d.Versions = []string{"2025-03-26"} },
			[]string{`Versions[0] "2025-03-26" predates 2026-07-28`, "LegacyVersions, not Versions"}},
		{"modern as legacy", func(d *Description) { d.LegacyVersions = []string{LatestVersion} },
			[]string{`LegacyVersions[0] "2026-07-28" is a modern version; list it in Versions, not LegacyVersions`}},
		{"future as legacy", func(d *Description) { d.LegacyVersions = []string{"2027-01-01"} },
			[]string{`LegacyVersions[0] "2027-01-01" is a modern version`}},
		{"bad scope", func(d *Description) { d.Cache.Scope = "shared" },
			[]string{`Cache.Scope "shared" must be "public", "private" or empty`}},
		{"several problems", func(d *Description) {
			d.Server.Name = ""
			d.Cache.Scope = "PUBLIC"
		}, []string{"Server.Name is required", `Cache.Scope "PUBLIC"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			tt.edit(d)
			err := d.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			for _, msg := range tt.msgs {
				assert.Contains(t, err.Error(), msg)
			}
		})
	}
}

func TestValidateAcceptsDefaultsAndFutureVersions(t *testing.T) {
	d := &Description{
		Server:   Implementation{Name: "s", Version: "1"},
		Versions: []string{"2027-03-01", LatestVersion},
		Cache:    CachePolicy{Scope: Private, Discover: NoCache, List: -time.Second},
	}
	assert.NoError(t, d.Validate())
	d.Cache.Scope = Public
	assert.NoError(t, d.Validate())
}

func TestInitialize(t *testing.T) {
	d := exampleDescription()
	d.OmitServerInfo = true // serverInfo is still required in the legacy result
	d.LegacyVersions = []string{"2025-06-18", "2025-11-25", "2025-03-26"}

	t.Run("requested version served is echoed", func(t *testing.T) {
		for _, v := range d.LegacyVersions {
			r, err := d.Initialize(v)
			require.NoError(t, err)
			assert.Equal(t, v, r.ProtocolVersion)
		}
	})

	t.Run("unserved version gets the latest legacy", func(t *testing.T) {
		for _, v := range []string{"2024-11-05", "2099-01-01", LatestVersion, "", "garbage"} {
			r, err := d.Initialize(v)
			require.NoError(t, err)
			assert.Equal(t, "2025-11-25", r.ProtocolVersion, "requested %q", v)
		}
	})

	t.Run("rendered shape", func(t *testing.T) {
		r, err := d.Initialize("2025-11-25")
		require.NoError(t, err)
		assert.JSONEq(t, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},
			"serverInfo":{"name":"ExampleServer","version":"1.0.0"},
			"instructions":"This server provides weather and resource utilities."}`, marshal(t, r))
	})

	t.Run("empty capabilities and instructions", func(t *testing.T) {
		d := &Description{Server: Implementation{Name: "s", Version: "1"}, LegacyVersions: []string{"2025-11-25"}}
		r, err := d.Initialize("2025-11-25")
		require.NoError(t, err)
		assert.JSONEq(t, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`, marshal(t, r))
	})

	t.Run("no legacy versions", func(t *testing.T) {
		d := exampleDescription()
		_, err := d.Initialize("2025-11-25")
		assert.True(t, errors.Is(err, ErrNoLegacyVersions))
	})
}

// A list result can embed Hint so ttlMs and cacheScope appear inline.
func TestHintEmbedding(t *testing.T) {
	type toolsList struct {
		Tools []string `json:"tools"`
		Hint
	}
	r := toolsList{Tools: []string{}, Hint: CachePolicy{Scope: Private}.Hint(CacheList)}
	assert.JSONEq(t, `{"tools":[],"ttlMs":300000,"cacheScope":"private"}`, marshal(t, r))
}

func TestConcurrentRendering(t *testing.T) {
	d := exampleDescription()
	d.LegacyVersions = []string{"2025-11-25"}
	d.Capabilities.Experimental = map[string]map[string]any{"x": nil}
	d.Server.Icons = []Icon{{Src: "a", Sizes: []string{"1x1"}}}
	render := func() (string, error) {
		b, err := json.Marshal(map[string]any{
			"supportedVersions": d.SupportedVersions(),
			"capabilities":      d.Capabilities,
			"instructions":      d.Instructions,
			"hint":              d.Cache.Hint(CacheDiscover),
			"_meta":             d.ServerInfoMeta(),
		})
		return string(b), err
	}
	want, err := render()
	require.NoError(t, err)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				got, err := render()
				if !assert.NoError(t, err) || !assert.Equal(t, want, got) {
					return
				}
				assert.NoError(t, d.Validate())
				_, err = d.Initialize("2025-11-25")
				assert.NoError(t, err)
			}
		}()
	}
	for range 8 {
		<-done
	}
}

// TestServerInfoKeyIsTheWireKey: discover writes the key itself, being a
// leaf; it must be the one the rest of mrtrkit reads.
func TestServerInfoKeyIsTheWireKey(t *testing.T) {
	assert.Equal(t, wire.MetaServerInfo, metaServerInfo)
}
