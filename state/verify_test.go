package state

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerify checks Claims.Verify on its own, without a codec: each bound
// field must match byte for byte, the principal is checked first, and the
// claims are left unchanged.
func TestVerify(t *testing.T) {
	cl := sampleClaims(t)
	want := bindingOf(cl)
	other := mustDigest(t, `{"env":"prod","replicas":4}`)

	require.NoError(t, cl.Verify(want))
	// Fields Verify does not bind play no part.
	loose := cl
	loose.Round, loose.Asked, loose.Payload = 7, nil, nil
	require.NoError(t, loose.Verify(want))
	var zero Claims
	require.NoError(t, zero.Verify(Binding{}), "empty strings and the zero digest are valid values")

	cases := []struct {
		name   string
		mutate func(*Binding)
		reason Reason
	}{
		{"principal", func(b *Binding) { b.Principal = "user:mallory@example.com" }, ReasonPrincipal},
		{"principal case", func(b *Binding) { b.Principal = "User:alice@example.com" }, ReasonPrincipal},
		{"principal empty", func(b *Binding) { b.Principal = "" }, ReasonPrincipal},
		{"audience", func(b *Binding) { b.Audience = "https://other.example.com" }, ReasonRequest},
		{"audience trailing slash", func(b *Binding) { b.Audience += "/" }, ReasonRequest},
		{"method", func(b *Binding) { b.Method = "prompts/get" }, ReasonRequest},
		{"target", func(b *Binding) { b.Target = "destroy" }, ReasonRequest},
		{"target prefix", func(b *Binding) { b.Target = "deplo" }, ReasonRequest},
		{"digest", func(b *Binding) { b.ArgsDigest = other }, ReasonRequest},
		{"digest one bit", func(b *Binding) { b.ArgsDigest[31] ^= 1 }, ReasonRequest},
		{"digest zero", func(b *Binding) { b.ArgsDigest = Digest{} }, ReasonRequest},
		// The principal is checked before the request.
		{"principal and target", func(b *Binding) { b.Principal = "x"; b.Target = "y" }, ReasonPrincipal},
		{"principal and digest", func(b *Binding) { b.Principal = "x"; b.ArgsDigest = other }, ReasonPrincipal},
		{"everything", func(b *Binding) { *b = Binding{Principal: "x", Audience: "y", Method: "z", Target: "w"} }, ReasonPrincipal},
		{"whole request", func(b *Binding) { b.Audience, b.Method, b.Target, b.ArgsDigest = "y", "z", "w", other }, ReasonRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := want
			tc.mutate(&b)
			before := sampleClaims(t)
			err := cl.Verify(b)
			requireReason(t, err, tc.reason)
			var e *Error
			require.True(t, errors.As(err, &e), "Verify returns an *Error")
			assert.Equal(t, tc.reason, e.Reason)
			assert.NotEmpty(t, e.Detail)
			assert.Equal(t, before, cl, "Verify leaves the claims alone")
			for _, secret := range []string{cl.Principal, cl.Target, cl.Audience, b.Principal} {
				if len(secret) > 1 {
					assert.NotContains(t, err.Error(), secret)
				}
			}
		})
	}

	// Each request field alone is enough to refuse, and is named in the
	// detail for logs.
	for field, mutate := range map[string]func(*Binding){
		"audience":  func(b *Binding) { b.Audience = "" },
		"method":    func(b *Binding) { b.Method = "" },
		"target":    func(b *Binding) { b.Target = "" },
		"arguments": func(b *Binding) { b.ArgsDigest = Digest{} },
	} {
		b := want
		mutate(&b)
		err := cl.Verify(b)
		requireReason(t, err, ReasonRequest, field)
		assert.Contains(t, err.Error(), field)
	}
}

// TestOpenKnowsNoBinding checks that Open accepts a genuine token whatever
// request it is later checked against, and that only Verify refuses it.
func TestOpenKnowsNoBinding(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			in, token := sealSample(t, codec)

			got, err := codec.Open(token)
			require.NoError(t, err)
			assert.Equal(t, bindingOf(in), bindingOf(got))
			assert.Equal(t, in.Round, got.Round)
			assert.Equal(t, in.Asked, got.Asked)
			assert.Equal(t, in.Payload, got.Payload)

			require.NoError(t, got.Verify(bindingOf(in)))
			requireReason(t, got.Verify(Binding{}), ReasonPrincipal)
			stranger := bindingOf(in)
			stranger.Principal = "user:mallory@example.com"
			requireReason(t, got.Verify(stranger), ReasonPrincipal)
			elsewhere := bindingOf(in)
			elsewhere.Target = "destroy"
			requireReason(t, got.Verify(elsewhere), ReasonRequest)

			// Opening again gives the same claims: Verify changed nothing.
			again, err := codec.Open(token)
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}
