package discover

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// LatestVersion is the newest MCP protocol revision this package renders.
const LatestVersion = "2026-07-28"

// metaServerInfo is the _meta key of the server's Implementation. It is
// internal/wire.MetaServerInfo, written here because discover is a leaf
// that imports nothing of mrtrkit (a test keeps the two equal).
const metaServerInfo = "io.modelcontextprotocol/serverInfo"

// firstModernVersion is the first revision that uses server/discover
// instead of initialize. Versions before it are legacy.
const firstModernVersion = "2026-07-28"

// ErrInvalid is wrapped by every problem [Description.Validate] reports.
var ErrInvalid = errors.New("discover: invalid description")

// ErrNoLegacyVersions is returned by [Description.Initialize] when the
// description serves no legacy versions.
var ErrNoLegacyVersions = errors.New("discover: no legacy protocol versions are served")

// Description is everything a server says about itself when a client asks.
// Build one at start-up and give it to mrtr.NewServer, which validates it
// and renders it as server/discover and, for legacy clients, as the
// initialize result. Its methods only read the Description; do not modify
// it while they may run concurrently.
type Description struct {
	// Server identifies the server software. Name and Version are
	// required.
	Server Implementation
	// Versions lists the modern (server/discover era) protocol versions
	// offered, each on or after 2026-07-28. Nil or empty means
	// []string{LatestVersion}.
	Versions []string
	// LegacyVersions lists the initialize-era protocol versions still
	// answered, such as "2025-11-25", each before 2026-07-28. Nil means
	// none: legacy clients are not served.
	LegacyVersions []string
	// Capabilities lists the optional features the server offers.
	Capabilities Capabilities
	// Instructions optionally tells the client how to use the server; a
	// client may pass it to the model.
	Instructions string
	// Cache sets the caching hints of discover and other cacheable results.
	Cache CachePolicy
	// OmitServerInfo leaves the server's Implementation out of the _meta
	// of discover results. It does not affect Initialize, whose result
	// requires serverInfo.
	OmitServerInfo bool
}

// Validate reports every problem with d, joined into one error; each
// problem wraps [ErrInvalid]. It checks that Server.Name and
// Server.Version are set, that icons have a source and a known theme, that
// every version is a well-formed YYYY-MM-DD date listed once, that modern
// versions are on or after 2026-07-28 and legacy ones before it, and that
// the cache scope is empty, Public or Private.
func (d *Description) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
	}

	if d.Server.Name == "" {
		bad("Server.Name is required")
	}
	if d.Server.Version == "" {
		bad("Server.Version is required")
	}
	for i, ic := range d.Server.Icons {
		if ic.Src == "" {
			bad("Server.Icons[%d].Src is required", i)
		}
		if ic.Theme != "" && ic.Theme != ThemeLight && ic.Theme != ThemeDark {
			bad("Server.Icons[%d].Theme %q must be %q, %q or empty", i, ic.Theme, ThemeLight, ThemeDark)
		}
	}

	seen := make(map[string]string) // version -> field it was first seen in
	check := func(field string, versions []string, legacy bool) {
		for i, v := range versions {
			where := fmt.Sprintf("%s[%d]", field, i)
			if !wellFormedVersion(v) {
				bad("%s %q is not a protocol version of the form YYYY-MM-DD", where, v)
				continue
			}
			if first, dup := seen[v]; dup {
				bad("%s %q is already listed in %s", where, v, first)
				continue
			}
			seen[v] = field
			switch {
			case legacy && v >= firstModernVersion:
				bad("%s %q is a modern version; list it in Versions, not LegacyVersions", where, v)
			case !legacy && v < firstModernVersion:
				bad("%s %q predates %s and is served through initialize; list it in LegacyVersions, not Versions", where, v, firstModernVersion)
			}
		}
	}
	check("Versions", d.Versions, false)
	check("LegacyVersions", d.LegacyVersions, true)

	if s := d.Cache.Scope; s != "" && !s.Valid() {
		bad("Cache.Scope %q must be %q, %q or empty", s, Public, Private)
	}
	return errors.Join(errs...)
}

// wellFormedVersion reports whether v is a real calendar date written as
// YYYY-MM-DD.
func wellFormedVersion(v string) bool {
	t, err := time.Parse(time.DateOnly, v)
	return err == nil && t.Format(time.DateOnly) == v
}

// ModernVersions returns the versions a request may name in its _meta
// (Versions, defaulted): what an UnsupportedProtocolVersion error lists as
// supported, since a legacy version cannot be used that way.
func (d *Description) ModernVersions() []string {
	return append([]string(nil), d.modernVersions()...)
}

func (d *Description) modernVersions() []string {
	if len(d.Versions) == 0 {
		return []string{LatestVersion}
	}
	return d.Versions
}

// SupportedVersions returns the versions a discover result advertises: the
// modern versions (Versions, defaulted) in their given order, followed by
// LegacyVersions when any are served. Listing legacy versions lets a client
// that speaks only an initialize-era version know to fall back to
// initialize, and keeps the versions reported in an unsupported-version
// error a subset of this list. The returned slice is a fresh copy.
func (d *Description) SupportedVersions() []string {
	modern := d.modernVersions()
	out := make([]string, 0, len(modern)+len(d.LegacyVersions))
	out = append(out, modern...)
	return append(out, d.LegacyVersions...)
}

// Supports reports whether version is one of the modern versions offered
// (Versions, defaulted). Legacy versions are not included; see
// [Description.SupportsLegacy].
func (d *Description) Supports(version string) bool {
	return slices.Contains(d.modernVersions(), version)
}

// SupportsLegacy reports whether version is one of LegacyVersions, that is
// whether an initialize request for it would be echoed back.
func (d *Description) SupportsLegacy(version string) bool {
	return slices.Contains(d.LegacyVersions, version)
}

// ServerInfoMeta returns the _meta entry that carries the server's
// Implementation, {"io.modelcontextprotocol/serverInfo": Server}, or nil when OmitServerInfo is
// set. The map is fresh on every call.
func (d *Description) ServerInfoMeta() map[string]any {
	if d.OmitServerInfo {
		return nil
	}
	return map[string]any{metaServerInfo: d.Server.clone()}
}

// InitializeResult is the result of the legacy (initialize-era, such as
// 2025-11-25) initialize request.
type InitializeResult struct {
	// ProtocolVersion is the negotiated protocol version.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities lists the optional features the server offers.
	Capabilities Capabilities `json:"capabilities"`
	// ServerInfo identifies the server software.
	ServerInfo Implementation `json:"serverInfo"`
	// Instructions optionally tells the client how to use the server.
	Instructions string `json:"instructions,omitempty"`
}

// Initialize renders d as the result of a legacy initialize request from a
// client that asked for the requested version. The negotiated version is
// requested when it is one of LegacyVersions, and otherwise the latest of
// LegacyVersions. It returns [ErrNoLegacyVersions] when LegacyVersions is
// empty. ServerInfo is always set, regardless of OmitServerInfo.
func (d *Description) Initialize(requested string) (InitializeResult, error) {
	if len(d.LegacyVersions) == 0 {
		return InitializeResult{}, ErrNoLegacyVersions
	}
	version := requested
	if !d.SupportsLegacy(requested) {
		version = slices.Max(d.LegacyVersions) // YYYY-MM-DD sorts by date
	}
	return InitializeResult{
		ProtocolVersion: version,
		Capabilities:    d.Capabilities.clone(),
		ServerInfo:      d.Server.clone(),
		Instructions:    d.Instructions,
	}, nil
}
