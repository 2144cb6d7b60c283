// Package oauth is for deployments that authenticate their callers: it
// makes an MCP server an OAuth 2.0 protected resource, as the MCP
// authorization specification asks.
//
// It has three parts:
//
//   - Metadata and MetadataHandler publish the protected resource
//     metadata document (RFC 9728), which tells clients which
//     authorization servers issue tokens for the server. MetadataURL and
//     MetadataPath give where it lives for a resource identifier: for a
//     server at https://mcp.example.com/mcp,
//     https://mcp.example.com/.well-known/oauth-protected-resource/mcp.
//   - Challenge builds the WWW-Authenticate value of a 401, which points
//     clients to that document.
//   - Verifier checks JWT access tokens (RFC 9068) with go-jose: the
//     typ header, which must say at+jwt (or application/at+jwt, in any
//     case) as RFC 9068 section 4 requires; the signature, with an
//     accepted algorithm and a key given in code or fetched from the
//     issuer's JWK set (cached, refreshed when the issuer rotates its
//     keys, never fetched more often than a set interval, and never
//     through a redirect); the issuer; the audience, which must contain
//     this resource's identifier (RFC 8707), so that a token issued for
//     another server is refused; the expiry and validity period; the
//     subject; and the syntax of the scope and scp claims (RFC 6749
//     section 3.3: tokens of printable ASCII but '"' and '\', separated
//     by single spaces; each scp array element one token). Its Verify
//     method fits streamablehttp.BearerAuthenticator.
//
// The typ check keeps other JWTs the issuer signs from passing as access
// tokens: an OpenID Connect ID token whose aud is a client ID equal to
// this resource's URL, for instance, carries a sub, an aud and an exp
// too. For an authorization server that sends typ "JWT" or none on its
// access tokens, name its type in Config.Types (which narrows the check
// to that type), or, as a last resort, set Config.AllowAnyType, which
// turns the check off and accepts every JWT the issuer signs for this
// audience.
//
// Wired together on one http.ServeMux:
//
//	resource := "https://mcp.example.com/mcp"
//	v, err := oauth.NewVerifier(oauth.Config{
//		Issuer:   "https://auth.example.com",
//		Audience: resource,
//		JWKSURL:  "https://auth.example.com/.well-known/jwks.json",
//	})
//	metaURL, _ := oauth.MetadataURL(resource)
//	metaPath, _ := oauth.MetadataPath(resource)
//	h, err := streamablehttp.New(srv,
//		streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(v.Verify, oauth.Challenge(metaURL))),
//		streamablehttp.WithResourceMetadata(metaURL),
//		streamablehttp.WithResourceMetadataHandler(metaPath, oauth.MetadataHandler(oauth.Metadata{
//			Resource:             resource,
//			AuthorizationServers: []string{"https://auth.example.com"},
//			ScopesSupported:      []string{"files:read"},
//		})))
//
// A request without a valid token is then answered 401 with
// `WWW-Authenticate: Bearer resource_metadata="…"`; a tool registered
// with mrtr.RequireScopes refuses a token without its scope with 403
// insufficient_scope, whose challenge names the same document.
//
// Errors of Verify wrap ErrInvalidToken and say what was wrong (expired,
// wrong audience, wrong issuer, bad signature, unknown key) for logs;
// they never contain the token, and the transport sends them to no
// client.
package oauth
