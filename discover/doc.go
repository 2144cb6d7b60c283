// Package discover is the description layer beneath mrtr.Server: it
// describes an MCP server once and renders that description as the answer
// to a client's "what can you do?" question. Most servers need only
// mrtr.New; a full Description goes to mrtr.NewServer.
//
// A server fills in a [Description] at start-up: who it is
// ([Implementation]), which protocol versions it speaks, which
// [Capabilities] it offers, optional instructions for the model, and how
// long clients may cache its answers ([CachePolicy]). From that single
// value the package renders:
//
//   - what server/discover answers for MCP 2026-07-28 and later: the
//     supported versions ([Description.SupportedVersions]), the
//     [Capabilities] and the instructions, which package mrtr renders with
//     every other result;
//   - the result of the legacy initialize request for initialize-era
//     clients such as 2025-11-25 ([Description.Initialize]);
//   - the caching hint (ttlMs and cacheScope) that every cacheable result
//     must carry ([CachePolicy.Hint]).
//
// # Server information
//
// In 2026-07-28 the server/discover result has no top-level serverInfo;
// the [Implementation] travels in _meta under the key "io.modelcontextprotocol/serverInfo".
// Set [Description.OmitServerInfo] to leave it out. The legacy initialize
// result always carries serverInfo at the top level because that protocol
// revision requires it.
//
// # Versions
//
// [Description.Versions] lists the modern (discover-era) versions, which
// default to [LatestVersion]. [Description.LegacyVersions] lists the
// initialize-era versions the server still answers, which default to none.
// The supportedVersions field of the discover result lists modern versions
// first and then legacy ones, so a client that finds only a legacy version
// it speaks knows to fall back to initialize, and any version list reported
// in an unsupported-version error can be a subset of it.
//
// # Caching
//
// The complete results of server/discover, tools/list, prompts/list,
// resources/list, resources/templates/list and resources/read must carry
// ttlMs (how many milliseconds the result stays fresh; 0 means stale
// immediately) and cacheScope ("public" when the result holds no
// user-specific data, "private" when it may be reused only within the same
// authorization context). [CachePolicy] holds one duration per [CacheKind] of
// result plus one [Scope]; [Hint] is the rendered pair and can be embedded
// in a result struct so its fields appear inline in the JSON. Every page of
// one list must use the same scope, which a single policy guarantees.
//
// # Capabilities
//
// [Capabilities] follows the 2026-07-28 ServerCapabilities shape. A
// capability that is present but has no options renders as {} (for example
// "tools":{}), an absent one is omitted, and an empty set renders as {}.
// The 2025-11-25 revision also defined a "tasks" capability; it is not
// modeled here, so neither rendering advertises it.
//
// The package depends only on the standard library.
package discover
