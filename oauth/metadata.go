package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// WellKnownPath is the well-known URI path under which a protected
// resource publishes its metadata (RFC 9728 section 3).
const WellKnownPath = "/.well-known/oauth-protected-resource"

// MetadataMaxAge is how long clients and caches may keep the metadata
// document that MetadataHandler serves, in seconds (its Cache-Control
// max-age).
const MetadataMaxAge = 3600

// Metadata is an OAuth 2.0 protected resource metadata document (RFC 9728
// section 2). Resource and AuthorizationServers are what MCP clients
// need; the other fields are optional and left out of the JSON when
// empty.
type Metadata struct {
	// Resource is the resource identifier: the canonical https URL of the
	// MCP endpoint, the value tokens must carry in their aud claim.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer identifiers of the
	// authorization servers that issue tokens for the resource. MCP
	// requires at least one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// JWKSURI is where the resource's own signing keys are published.
	// It is unrelated to the keys that sign access tokens, which the
	// authorization server publishes; most resources leave it empty.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// ScopesSupported are the scope values the resource uses in
	// authorization requests.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported are the ways a bearer token may be sent
	// (RFC 6750): "header", "body" or "query". MetadataHandler serves
	// ["header"] when it is empty, the only method MCP allows.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceSigningAlgValuesSupported are the JWS algorithms the
	// resource uses to sign its responses.
	ResourceSigningAlgValuesSupported []string `json:"resource_signing_alg_values_supported,omitempty"`
	// ResourceName is a human-readable name for the resource.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is the URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// ResourcePolicyURI is the URL of the resource's data-use policy.
	ResourcePolicyURI string `json:"resource_policy_uri,omitempty"`
	// ResourceTOSURI is the URL of the resource's terms of service.
	ResourceTOSURI string `json:"resource_tos_uri,omitempty"`
	// TLSClientCertificateBoundAccessTokens says the resource supports
	// mutual-TLS certificate-bound access tokens (RFC 8705).
	TLSClientCertificateBoundAccessTokens bool `json:"tls_client_certificate_bound_access_tokens,omitempty"`
	// AuthorizationDetailsTypesSupported are the authorization_details
	// types the resource supports (RFC 9396).
	AuthorizationDetailsTypesSupported []string `json:"authorization_details_types_supported,omitempty"`
	// DPoPSigningAlgValuesSupported are the JWS algorithms the resource
	// accepts for DPoP proofs (RFC 9449).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// DPoPBoundAccessTokensRequired says the resource always requires
	// DPoP-bound access tokens (RFC 9449).
	DPoPBoundAccessTokensRequired bool `json:"dpop_bound_access_tokens_required,omitempty"`
}

// Validate reports what makes m unfit for MCP clients: a Resource that
// is not an https URL (http is accepted on loopback hosts, for local
// development) or has a fragment, no AuthorizationServers, or an
// authorization server that is not such a URL.
func (m Metadata) Validate() error {
	if _, err := resourceURL(m.Resource); err != nil {
		return err
	}
	if len(m.AuthorizationServers) == 0 {
		return errors.New("oauth: metadata names no authorization server")
	}
	for _, s := range m.AuthorizationServers {
		if _, err := resourceURL(s); err != nil {
			return fmt.Errorf("oauth: authorization server: %w", err)
		}
	}
	return nil
}

// MetadataHandler serves m as JSON, as RFC 9728 section 3.2 says: mount it
// at the path MetadataPath gives for m.Resource. It answers GET and HEAD
// with the document (Cache-Control allowing MetadataMaxAge seconds, and
// Access-Control-Allow-Origin "*" so that browser-based clients can read
// it, as the document is public and carries no credentials), OPTIONS
// (a CORS preflight) with 204, and every other method with 405. m is
// encoded once, when the handler is made; check it with Validate first.
func MetadataHandler(m Metadata) http.Handler {
	if len(m.BearerMethodsSupported) == 0 {
		m.BearerMethodsSupported = []string{"header"}
	}
	body, err := json.Marshal(m)
	if err != nil {
		// Metadata holds only strings, slices of strings and booleans.
		panic("oauth: encoding metadata: " + err.Error())
	}
	return &metadataHandler{body: body, length: strconv.Itoa(len(body))}
}

type metadataHandler struct {
	body   []byte
	length string
}

const metadataMethods = "GET, HEAD, OPTIONS"

func (h *metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Content-Length", h.length)
		hdr.Set("Cache-Control", "public, max-age="+strconv.Itoa(MetadataMaxAge))
		hdr.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.body)
		}
	case http.MethodOptions:
		hdr.Set("Allow", metadataMethods)
		hdr.Set("Access-Control-Allow-Methods", "GET, HEAD")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			// Clients send MCP-Protocol-Version with their first
			// request; any header is harmless on a public document.
			hdr.Set("Access-Control-Allow-Headers", req)
		}
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	default:
		hdr.Set("Allow", metadataMethods)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// MetadataURL returns the URL of the metadata document of the resource
// whose identifier is resource (RFC 9728 section 3.1): the well-known
// path is put between the host and the resource's path, so
// https://mcp.example.com/mcp has its metadata at
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp, and
// https://mcp.example.com (or https://mcp.example.com/) at
// https://mcp.example.com/.well-known/oauth-protected-resource. A query
// is kept. The resource must be an https URL without a fragment or user
// information; http is accepted on loopback hosts, for local development.
func MetadataURL(resource string) (string, error) {
	u, err := resourceURL(resource)
	if err != nil {
		return "", err
	}
	out := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
	out.Path, out.RawPath = wellKnown(u)
	return out.String(), nil
}

// MetadataPath returns the path part of MetadataURL(resource), the
// pattern to mount MetadataHandler at on the resource's own server, for
// example "/.well-known/oauth-protected-resource/mcp".
func MetadataPath(resource string) (string, error) {
	u, err := resourceURL(resource)
	if err != nil {
		return "", err
	}
	p, raw := wellKnown(u)
	if raw != "" {
		return raw, nil
	}
	return p, nil
}

// wellKnown returns the metadata path of u, decoded and (when escaping
// matters) encoded.
func wellKnown(u *url.URL) (path, rawPath string) {
	p := u.Path
	if p == "/" {
		p = ""
	}
	path = WellKnownPath + p
	if u.RawPath != "" {
		rp := u.RawPath
		if rp == "/" {
			rp = ""
		}
		rawPath = WellKnownPath + rp
	}
	return path, rawPath
}

// resourceURL parses an identifier that must be an https URL (http on a
// loopback host) with a host, and without a fragment or user information.
func resourceURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("oauth: empty resource identifier")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("oauth: resource identifier: %w", err)
	}
	switch {
	case u.Host == "" || u.Opaque != "":
		return nil, fmt.Errorf("oauth: %q is not an absolute URL with a host", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("oauth: %q has a fragment", s)
	case u.User != nil:
		return nil, fmt.Errorf("oauth: %q has user information", s)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("oauth: %q is not an https URL", s)
	}
	return u, nil
}

// isLoopback reports whether host names this machine: localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Challenge returns the WWW-Authenticate value of a 401 from an MCP
// server (RFC 9728 section 5.1, RFC 6750 section 3): it names where the
// resource's metadata is and, when scopes are given, the scopes a client
// should ask for. Give it to streamablehttp.BearerAuthenticator:
//
//	Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read"
func Challenge(metadataURL string, scopes ...string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	if metadataURL != "" {
		b.WriteString(sep + "resource_metadata=")
		quoted(&b, metadataURL)
		sep = ", "
	}
	if len(scopes) > 0 {
		b.WriteString(sep + "scope=")
		quoted(&b, strings.Join(scopes, " "))
	}
	return b.String()
}

// quoted writes s as an RFC 9110 quoted-string.
func quoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		if c < 0x20 || c == 0x7f {
			continue // control characters cannot appear in a header
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
}
