package discover

import (
	"encoding/json"
	"maps"
)

// Icon is an image a client may show for the server.
type Icon struct {
	// Src is the URI of the image (an https: or data: URI). Required.
	Src string `json:"src"`
	// MIMEType is the image's media type, such as "image/png".
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists the sizes the image is available in, such as "48x48"
	// or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme says which color theme the icon is designed for: ThemeLight,
	// ThemeDark, or empty for either.
	Theme string `json:"theme,omitempty"`
}

// Icon themes accepted in [Icon.Theme].
const (
	// ThemeLight marks an icon meant for a light background.
	ThemeLight = "light"
	// ThemeDark marks an icon meant for a dark background.
	ThemeDark = "dark"
)

// Implementation names a piece of MCP software and its version. The server
// reports its own Implementation in discover and initialize results.
type Implementation struct {
	// Name is the programmatic name of the software. Required.
	Name string `json:"name"`
	// Version is the software's version string. Required.
	Version string `json:"version"`
	// Title is an optional human-readable display name.
	Title string `json:"title,omitempty"`
	// Description is an optional human-readable summary.
	Description string `json:"description,omitempty"`
	// WebsiteURL is an optional link to the software's home page.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Icons are optional images representing the software.
	Icons []Icon `json:"icons,omitempty"`
}

// clone returns a copy of im that shares no slices with it.
func (im Implementation) clone() Implementation {
	if im.Icons != nil {
		icons := make([]Icon, len(im.Icons))
		for i, ic := range im.Icons {
			if ic.Sizes != nil {
				ic.Sizes = append([]string{}, ic.Sizes...)
			}
			icons[i] = ic
		}
		im.Icons = icons
	}
	return im
}

// Empty is the options object of a capability that has no options. A
// non-nil *Empty means the capability is offered and renders as {}.
type Empty struct{}

// ListChanged is the options object of the prompts and tools capabilities.
type ListChanged struct {
	// ListChanged reports whether the server sends a notification when
	// the list changes.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the options object of the resources capability.
type ResourcesCapability struct {
	// Subscribe reports whether clients may subscribe to updates of
	// individual resources.
	Subscribe bool `json:"subscribe,omitempty"`
	// ListChanged reports whether the server sends a notification when
	// the resource list changes.
	ListChanged bool `json:"listChanged,omitempty"`
}

// Capabilities is the set of optional features a server offers. A nil
// pointer or map means the feature is not offered; a non-nil one means it
// is, even when it carries no options.
//
// The 2025-11-25 "tasks" capability is not modeled.
type Capabilities struct {
	// Experimental holds non-standard capabilities, keyed by name. A nil
	// options map renders as {}.
	Experimental map[string]map[string]any `json:"experimental,omitempty"`
	// Logging is set when the server emits log messages to the client.
	Logging *Empty `json:"logging,omitempty"`
	// Completions is set when the server offers argument completion.
	Completions *Empty `json:"completions,omitempty"`
	// Prompts is set when the server offers prompts.
	Prompts *ListChanged `json:"prompts,omitempty"`
	// Resources is set when the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitempty"`
	// Tools is set when the server offers tools.
	Tools *ListChanged `json:"tools,omitempty"`
	// Extensions holds the protocol extensions the server supports, keyed
	// by extension identifier. A nil options map renders as {}.
	Extensions map[string]map[string]any `json:"extensions,omitempty"`
}

// MarshalJSON renders c so that every present capability is a JSON object:
// nil option maps inside Experimental and Extensions become {} rather than
// null. An empty Capabilities renders as {}.
func (c Capabilities) MarshalJSON() ([]byte, error) {
	type plain Capabilities // plain has no MarshalJSON, avoiding recursion
	p := plain(c)
	p.Experimental = objectMaps(c.Experimental)
	p.Extensions = objectMaps(c.Extensions)
	return json.Marshal(p)
}

// objectMaps returns m with every nil value replaced by an empty map. It
// returns m itself when no replacement is needed.
func objectMaps(m map[string]map[string]any) map[string]map[string]any {
	hasNil := false
	for _, v := range m {
		if v == nil {
			hasNil = true
			break
		}
	}
	if !hasNil {
		return m
	}
	out := make(map[string]map[string]any, len(m))
	for k, v := range m {
		if v == nil {
			v = map[string]any{}
		}
		out[k] = v
	}
	return out
}

// Merge returns the union of c and o. A capability present in either is
// present in the result, boolean options are OR-ed, and the Experimental
// and Extensions maps are merged with o's entry winning when both have the
// same key. The result shares no pointers or maps with c or o, although
// the option values inside map entries are copied shallowly.
func (c Capabilities) Merge(o Capabilities) Capabilities {
	return Capabilities{
		Experimental: mergeMaps(c.Experimental, o.Experimental),
		Logging:      mergeEmpty(c.Logging, o.Logging),
		Completions:  mergeEmpty(c.Completions, o.Completions),
		Prompts:      mergeListChanged(c.Prompts, o.Prompts),
		Resources:    mergeResources(c.Resources, o.Resources),
		Tools:        mergeListChanged(c.Tools, o.Tools),
		Extensions:   mergeMaps(c.Extensions, o.Extensions),
	}
}

// clone returns a copy of c that shares no pointers or maps with it.
func (c Capabilities) clone() Capabilities { return c.Merge(Capabilities{}) }

func mergeEmpty(a, b *Empty) *Empty {
	if a == nil && b == nil {
		return nil
	}
	return &Empty{}
}

func mergeListChanged(a, b *ListChanged) *ListChanged {
	if a == nil && b == nil {
		return nil
	}
	var out ListChanged
	if a != nil {
		out.ListChanged = a.ListChanged
	}
	if b != nil {
		out.ListChanged = out.ListChanged || b.ListChanged
	}
	return &out
}

func mergeResources(a, b *ResourcesCapability) *ResourcesCapability {
	if a == nil && b == nil {
		return nil
	}
	var out ResourcesCapability
	if a != nil {
		out = *a
	}
	if b != nil {
		out.Subscribe = out.Subscribe || b.Subscribe
		out.ListChanged = out.ListChanged || b.ListChanged
	}
	return &out
}

func mergeMaps(a, b map[string]map[string]any) map[string]map[string]any {
	if a == nil && b == nil {
		return nil
	}
	out := make(map[string]map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = maps.Clone(v)
	}
	for k, v := range b {
		out[k] = maps.Clone(v)
	}
	return out
}
