package mrtr

import (
	"encoding/json"
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
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Content is one block of a tool result or a prompt message: a
// *TextContent, *ImageContent, *AudioContent, *ResourceLink or
// *EmbeddedResource.
type Content interface {
	contentType() string
}

// TextContent is text.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Object       `json:"_meta,omitempty"`
}

// ImageContent is a base64-encoded image.
type ImageContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Object       `json:"_meta,omitempty"`
}

// AudioContent is base64-encoded audio.
type AudioContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Object       `json:"_meta,omitempty"`
}

// ResourceLink points at a resource the client may read.
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Object       `json:"_meta,omitempty"`
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitempty"`
	Meta        Object           `json:"_meta,omitempty"`
}

// ResourceContents is the content of a resource: Text or Blob (base64),
// exactly one of them.
type ResourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     Object  `json:"_meta,omitempty"`
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
