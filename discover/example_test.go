package discover_test

import (
	"bytes"
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
	b, err := d.MarshalDiscover()
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.String())
	// Output:
	// {
	//   "resultType": "complete",
	//   "supportedVersions": [
	//     "2026-07-28"
	//   ],
	//   "capabilities": {
	//     "resources": {},
	//     "tools": {}
	//   },
	//   "instructions": "This server provides weather and resource utilities.",
	//   "ttlMs": 3600000,
	//   "cacheScope": "public",
	//   "_meta": {
	//     "io.modelcontextprotocol/serverInfo": {
	//       "name": "ExampleServer",
	//       "version": "1.0.0"
	//     }
	//   }
	// }
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
	for _, k := range []discover.Kind{discover.KindDiscover, discover.KindList, discover.KindRead} {
		h := p.Hint(k)
		fmt.Println(k, h.TTLMs, h.CacheScope)
	}
	// Output:
	// discover 3600000 private
	// list 30000 private
	// read 0 private
}
