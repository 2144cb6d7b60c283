package discover

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleDescription builds the Description that renders the discover
// example in testdata/discover_example.json.
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

func TestDiscoverMatchesExample(t *testing.T) {
	want, err := os.ReadFile("testdata/discover_example.json")
	require.NoError(t, err)
	got, err := exampleDescription().MarshalDiscover()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

func TestDiscoverGolden(t *testing.T) {
	tests := []struct {
		name string
		edit func(d *Description)
		want string
	}{
		{"minimal defaults", func(d *Description) {
			*d = Description{Server: Implementation{Name: "s", Version: "0.1.0"}}
		}, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},
			"ttlMs":3600000,"cacheScope":"public",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"0.1.0"}}}`},
		{"omit server info", func(d *Description) { d.OmitServerInfo = true },
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},
			"instructions":"This server provides weather and resource utilities.",
			"ttlMs":3600000,"cacheScope":"public"}`},
		{"private scope", func(d *Description) { d.Cache.Scope = Private },
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},
			"instructions":"This server provides weather and resource utilities.",
			"ttlMs":3600000,"cacheScope":"private",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}`},
		{"no cache", func(d *Description) { d.Cache.Discover = NoCache; d.Instructions = "" },
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},
			"ttlMs":0,"cacheScope":"public",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}`},
		{"custom ttl and legacy versions", func(d *Description) {
			d.Cache.Discover = 10 * time.Minute
			d.LegacyVersions = []string{"2025-06-18", "2025-11-25"}
			d.Instructions = ""
		}, `{"resultType":"complete","supportedVersions":["2026-07-28","2025-06-18","2025-11-25"],
			"capabilities":{"tools":{},"resources":{}},"ttlMs":600000,"cacheScope":"public",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}`},
		{"full implementation", func(d *Description) {
			d.Instructions = ""
			d.Capabilities = Capabilities{Logging: &Empty{}}
			d.Server = Implementation{
				Name: "full", Version: "2.0.0", Title: "Full Server", Description: "Does everything.",
				WebsiteURL: "https://example.com",
				Icons: []Icon{
					{Src: "https://example.com/icon.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: ThemeLight},
					{Src: "https://example.com/icon.svg"},
				},
			}
		}, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{}},
			"ttlMs":3600000,"cacheScope":"public",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"full","version":"2.0.0","title":"Full Server",
			"description":"Does everything.","websiteUrl":"https://example.com",
			"icons":[{"src":"https://example.com/icon.png","mimeType":"image/png","sizes":["48x48"],"theme":"light"},
			{"src":"https://example.com/icon.svg"}]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := exampleDescription()
			tt.edit(d)
			got, err := d.MarshalDiscover()
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

// TestDiscoverShape checks the rendered result against the schema of the
// 2026-07-28 server/discover result: required keys, their JSON types, and
// no top-level serverInfo.
func TestDiscoverShape(t *testing.T) {
	example, err := os.ReadFile("testdata/discover_example.json")
	require.NoError(t, err)
	d := exampleDescription()
	d.LegacyVersions = []string{"2025-11-25"}
	d.Cache = CachePolicy{Scope: Private, Discover: 90 * time.Second}
	ours, err := d.MarshalDiscover()
	require.NoError(t, err)

	for name, doc := range map[string][]byte{"example": example, "rendered": ours} {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(doc, &m))

			for _, key := range []string{"resultType", "supportedVersions", "capabilities", "ttlMs", "cacheScope"} {
				assert.Contains(t, m, key, "required key")
			}
			assert.NotContains(t, m, "serverInfo", "no top-level serverInfo")
			assert.NotContains(t, m, "protocolVersion")
			for key := range m {
				assert.Contains(t, []string{"resultType", "supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta"}, key, "unexpected key")
			}

			assert.Equal(t, "complete", m["resultType"])

			versions, ok := m["supportedVersions"].([]any)
			require.True(t, ok, "supportedVersions is an array")
			require.NotEmpty(t, versions)
			for _, v := range versions {
				s, ok := v.(string)
				require.True(t, ok, "version is a string")
				assert.True(t, wellFormedVersion(s), s)
			}
			assert.Equal(t, LatestVersion, versions[0])

			caps, ok := m["capabilities"].(map[string]any)
			require.True(t, ok, "capabilities is an object")
			for name, c := range caps {
				_, ok := c.(map[string]any)
				assert.True(t, ok, "capability %s is an object", name)
			}

			ttl, ok := m["ttlMs"].(float64)
			require.True(t, ok, "ttlMs is a number")
			assert.Equal(t, float64(int64(ttl)), ttl, "ttlMs is an integer")
			assert.GreaterOrEqual(t, ttl, 0.0)

			assert.Contains(t, []any{"public", "private"}, m["cacheScope"])

			if instr, present := m["instructions"]; present {
				assert.IsType(t, "", instr)
			}

			meta, ok := m["_meta"].(map[string]any)
			require.True(t, ok, "_meta is an object")
			info, ok := meta[MetaServerInfo].(map[string]any)
			require.True(t, ok, "serverInfo is an object")
			assert.IsType(t, "", info["name"])
			assert.IsType(t, "", info["version"])
		})
	}
}

func TestDiscoverResultRoundTrip(t *testing.T) {
	example, err := os.ReadFile("testdata/discover_example.json")
	require.NoError(t, err)
	var r DiscoverResult
	require.NoError(t, json.Unmarshal(example, &r))
	assert.Equal(t, ResultTypeComplete, r.ResultType)
	assert.Equal(t, int64(3_600_000), r.TTLMs)
	assert.Equal(t, Public, r.CacheScope)
	assert.NotNil(t, r.Capabilities.Tools)
	assert.NotNil(t, r.Capabilities.Resources)
	assert.JSONEq(t, string(example), marshal(t, r))
}

func TestDiscoverSharesNothing(t *testing.T) {
	d := exampleDescription()
	d.Server.Icons = []Icon{{Src: "a", Sizes: []string{"1x1"}}}
	r := d.Discover()
	r.SupportedVersions[0] = "changed"
	r.Capabilities.Tools.ListChanged = true
	info := r.Meta[MetaServerInfo].(Implementation)
	info.Icons[0].Sizes[0] = "changed"

	assert.Equal(t, []string{LatestVersion}, d.SupportedVersions())
	assert.False(t, d.Capabilities.Tools.ListChanged)
	assert.Equal(t, "1x1", d.Server.Icons[0].Sizes[0])
}

func TestMarshalDiscoverValidates(t *testing.T) {
	d := &Description{}
	b, err := d.MarshalDiscover()
	assert.Nil(t, b)
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestServerInfoMeta(t *testing.T) {
	d := exampleDescription()
	assert.Equal(t, map[string]any{MetaServerInfo: d.Server}, d.ServerInfoMeta())
	d.OmitServerInfo = true
	assert.Nil(t, d.ServerInfoMeta())
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
	r := toolsList{Tools: []string{}, Hint: CachePolicy{Scope: Private}.Hint(KindList)}
	assert.JSONEq(t, `{"tools":[],"ttlMs":300000,"cacheScope":"private"}`, marshal(t, r))
}

func TestConcurrentRendering(t *testing.T) {
	d := exampleDescription()
	d.LegacyVersions = []string{"2025-11-25"}
	d.Capabilities.Experimental = map[string]map[string]any{"x": nil}
	want, err := d.MarshalDiscover()
	require.NoError(t, err)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				b, err := d.MarshalDiscover()
				if !assert.NoError(t, err) || !assert.Equal(t, want, b) {
					return
				}
				_, err = d.Initialize("2025-11-25")
				assert.NoError(t, err)
			}
		}()
	}
	for range 8 {
		<-done
	}
}
