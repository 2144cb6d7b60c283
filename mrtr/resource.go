package mrtr

import (
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Resource describes a resource the server can read.
type Resource struct {
	// URI identifies the resource in resources/read; it is matched exactly.
	URI string `json:"uri"`
	// Name is the resource's name.
	Name string `json:"name"`
	// Title is the resource's display name.
	Title string `json:"title,omitempty"`
	// Description says what the resource holds.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's media type, when known (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the resource's size in bytes; nil when unknown.
	Size *int64 `json:"size,omitempty"`
	// Annotations are optional hints about the resource.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are icons the client may show for the resource.
	Icons []discover.Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template. mrtrkit matches simple {name} expressions, each standing for
// one or more characters other than '/'.
type ResourceTemplate struct {
	// URITemplate is the template the URIs of the family match
	// (uriTemplate), such as "db://{schema}/{table}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's name.
	Name string `json:"name"`
	// Title is the template's display name.
	Title string `json:"title,omitempty"`
	// Description says what the resources of the family hold.
	Description string `json:"description,omitempty"`
	// MIMEType is the media type of every resource of the family, when
	// they share one (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are optional hints about the resources.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are icons the client may show for the template.
	Icons []discover.Icon `json:"icons,omitempty"`
	// Meta is the template's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ReadResourceResult is the complete result of resources/read.
type ReadResourceResult struct {
	// Contents are the resource's contents. A handler answers a missing
	// resource with ResourceNotFoundError, not with empty Contents.
	Contents []ResourceContents `json:"contents"`
	// Meta is the result's _meta; the Server sets the serverInfo key itself.
	Meta Object `json:"_meta,omitempty"`
}

func (r *ReadResourceResult) wire() (string, any, Object, bool) {
	if r == nil {
		return "", nil, nil, false
	}
	cp := *r
	if cp.Contents == nil {
		cp.Contents = []ResourceContents{}
	}
	cp.Meta = nil
	return wire.MethodResourcesRead, &cp, r.Meta, true
}
