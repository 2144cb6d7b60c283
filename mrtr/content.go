package mrtr

import (
	"encoding/json"

	"github.com/mrtrkit/mrtrkit/discover"
)

// Role is the speaker of a message: "user" or "assistant".
type Role string

// The two roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are hints about how a client should use an object.
type Annotations struct {
	// Audience lists who the object is meant for: the user, the
	// assistant, or both.
	Audience []Role `json:"audience,omitempty"`
	// Priority is how important the object is, from 0 (optional) to 1
	// (required); nil means unstated.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is when the object last changed, as an ISO 8601
	// timestamp (lastModified).
	LastModified string `json:"lastModified,omitempty"`
}

// Content is one block of a tool result or a prompt message: a
// *TextContent, *ImageContent, *AudioContent, *ResourceLink or
// *EmbeddedResource.
type Content interface {
	contentType() string
}

// TextContent is text.
type TextContent struct {
	// Text is the text itself.
	Text string `json:"text"`
	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ImageContent is a base64-encoded image.
type ImageContent struct {
	// Data is the image, base64-encoded.
	Data string `json:"data"`
	// MIMEType is the image's media type, such as image/png (mimeType).
	MIMEType string `json:"mimeType"`
	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// AudioContent is base64-encoded audio.
type AudioContent struct {
	// Data is the audio, base64-encoded.
	Data string `json:"data"`
	// MIMEType is the audio's media type, such as audio/wav (mimeType).
	MIMEType string `json:"mimeType"`
	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ResourceLink points at a resource the client may read.
type ResourceLink struct {
	// URI is the resource's URI, for resources/read.
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
	// Icons are icons the client may show for the resource.
	Icons []discover.Icon `json:"icons,omitempty"`
	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	// Resource is the embedded contents.
	Resource ResourceContents `json:"resource"`
	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ResourceContents is the content of a resource: Text or Blob (base64),
// exactly one of them.
type ResourceContents struct {
	// URI is the URI of the resource the contents belong to.
	URI string `json:"uri"`
	// MIMEType is the contents' media type, when known (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the contents as text; nil for binary contents.
	Text *string `json:"text,omitempty"`
	// Blob is the contents as base64-encoded bytes; nil for text contents.
	Blob *string `json:"blob,omitempty"`
	// Meta is the contents' _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// TextResource returns text contents for uri.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: &text}
}

// BlobResource returns binary contents for uri; blob is base64.
func BlobResource(uri, mimeType, blob string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: &blob}
}

// Text returns a text content block.
func Text(s string) *TextContent { return &TextContent{Text: s} }

func (*TextContent) contentType() string      { return "text" }
func (*ImageContent) contentType() string     { return "image" }
func (*AudioContent) contentType() string     { return "audio" }
func (*ResourceLink) contentType() string     { return "resource_link" }
func (*EmbeddedResource) contentType() string { return "resource" }

// withType marshals v with a leading "type" member.
func withType(typ string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(typ)+12)
	out = append(out, `{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// MarshalJSON adds "type":"text".
func (c *TextContent) MarshalJSON() ([]byte, error) {
	type plain TextContent
	return withType("text", (*plain)(c))
}

// MarshalJSON adds "type":"image".
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	type plain ImageContent
	return withType("image", (*plain)(c))
}

// MarshalJSON adds "type":"audio".
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	type plain AudioContent
	return withType("audio", (*plain)(c))
}

// MarshalJSON adds "type":"resource_link".
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	type plain ResourceLink
	return withType("resource_link", (*plain)(c))
}

// MarshalJSON adds "type":"resource".
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	type plain EmbeddedResource
	return withType("resource", (*plain)(c))
}
