package discover_test

import (
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/mrtrkit/mrtrkit/discover"
)

func Example() {
	d := &discover.Description{
		Server: discover.Implementation{Name: "ExampleServer", Version: "1.0.0"},
		Capabilities: discover.Capabilities{
			Tools:     &discover.ListChanged{},
			Resources: &discover.ResourcesCapability{},
		},
		Instructions: "This server provides weather and resource utilities.",
	}
	if err := d.Validate(); err != nil {
		log.Fatal(err)
	}
	// Package mrtr renders server/discover from these pieces.
	caps, err := json.Marshal(d.Capabilities)
	if err != nil {
		log.Fatal(err)
	}
	hint, err := json.Marshal(d.Cache.Hint(discover.CacheDiscover))
	if err != nil {
		log.Fatal(err)
	}
	meta, err := json.Marshal(d.ServerInfoMeta())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("supportedVersions:", d.SupportedVersions())
	fmt.Println("capabilities:", string(caps))
	fmt.Println("instructions:", d.Instructions)
	fmt.Println("hint:", string(hint))
	fmt.Println("_meta:", string(meta))
	// Output:
	// supportedVersions: [2026-07-28]
	// capabilities: {"resources":{},"tools":{}}
	// instructions: This server provides weather and resource utilities.
	// hint: {"ttlMs":3600000,"cacheScope":"public"}
	// _meta: {"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}
}

func ExampleDescription_SupportedVersions() {
	d := &discover.Description{
		Server:         discover.Implementation{Name: "ExampleServer", Version: "1.0.0"},
		LegacyVersions: []string{"2025-06-18", "2025-11-25"},
	}
	fmt.Println(d.SupportedVersions())
	fmt.Println(d.ModernVersions())
	// Output:
	// [2026-07-28 2025-06-18 2025-11-25]
	// [2026-07-28]
}

func ExampleCapabilities_Merge() {
	a := discover.Capabilities{Tools: &discover.ListChanged{}}
	b := discover.Capabilities{
		Tools:      &discover.ListChanged{ListChanged: true},
		Logging:    &discover.Empty{},
		Extensions: map[string]map[string]any{"io.example/ext": nil},
	}
	out, err := json.Marshal(a.Merge(b))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"logging":{},"tools":{"listChanged":true},"extensions":{"io.example/ext":{}}}
}

func ExampleDescription_Initialize() {
	d := &discover.Description{
		Server:         discover.Implementation{Name: "ExampleServer", Version: "1.0.0"},
		LegacyVersions: []string{"2025-06-18", "2025-11-25"},
	}
	for _, requested := range []string{"2025-06-18", "2024-11-05"} {
		r, err := d.Initialize(requested)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(requested, "->", r.ProtocolVersion)
	}
	// Output:
	// 2025-06-18 -> 2025-06-18
	// 2024-11-05 -> 2025-11-25
}

func ExampleCachePolicy_Hint() {
	p := discover.CachePolicy{List: 30 * time.Second, Read: discover.NoCache, Scope: discover.Private}
	for _, k := range []discover.CacheKind{discover.CacheDiscover, discover.CacheList, discover.CacheRead} {
		h := p.Hint(k)
		fmt.Println(k, h.TTLMs, h.CacheScope)
	}
	// Output:
	// discover 3600000 private
	// list 30000 private
	// read 0 private
}
