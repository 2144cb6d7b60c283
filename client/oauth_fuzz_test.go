package client

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzNonceChallenge feeds untrusted challenge answers (status, headers,
// body) to the use_dpop_nonce reader: it never panics, and a nonce it
// returns is one of RFC 9449's grammar, which is safe in a proof.
func FuzzNonceChallenge(f *testing.F) {
	f.Add(400, "n-1", "", `{"error":"use_dpop_nonce"}`)
	f.Add(401, "n-2", `DPoP error="use_dpop_nonce", resource_metadata="https://x/y"`, "")
	f.Add(401, "bad nonce", `Bearer error="invalid_token", DPoP error=use_dpop_nonce`, "")
	f.Add(401, "n", `DPoP error="use_dpop_nonce`, "")
	f.Fuzz(func(t *testing.T, status int, nonce, challenge, body string) {
		h := http.Header{}
		h.Set("DPoP-Nonce", nonce)
		h.Set("WWW-Authenticate", challenge)
		got := nonceChallenge(status, h, []byte(body))
		if got != "" && (got != nonce || !validNonce(got)) {
			t.Fatalf("returned nonce %q from header %q", got, nonce)
		}
		if got != "" && status != 400 && status != 401 {
			t.Fatalf("a challenge from HTTP %d", status)
		}
	})
}

// FuzzParseTokenResponse feeds untrusted token endpoint answers to the
// parser: no panic; an accepted answer has a token that can go in a
// header, and a refused one is an error.
func FuzzParseTokenResponse(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","token_type":"DPoP","expires_in":60}`))
	f.Add(400, []byte(`{"error":"invalid_grant","error_description":"no"}`))
	f.Add(200, []byte(`{"access_token":"a b"}`))
	f.Add(200, []byte(`{"access_token":1}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		tr, err := parseTokenResponse("https://as/token", status, body)
		if err != nil {
			return
		}
		if status != 200 || tr.AccessToken == "" || !validTokenValue(tr.AccessToken) || tr.TokenType == "" {
			t.Fatalf("accepted %+v from HTTP %d", tr, status)
		}
	})
}

// FuzzProofNonce reads the nonce of a refused proof; the proof comes back
// in the response's request, so it must never panic on any string.
func FuzzProofNonce(f *testing.F) {
	f.Add("e30.eyJub25jZSI6Im4ifQ.sig")
	f.Add("..")
	f.Add("a.!!!.c")
	f.Fuzz(func(t *testing.T, s string) { _ = proofNonce(s) })
}

// The nonce grammar of RFC 9449: NQCHAR, no quote, backslash, space or
// control character.
func TestValidNonce(t *testing.T) {
	for s, want := range map[string]bool{"abc-._~!#$%&'()*+,/:;<=>?@[]^`{|}": true, "": false, "a b": false, `a"b`: false, `a\b`: false, "a\x7f": false, "é": false} {
		assert.Equal(t, want, validNonce(s), "validNonce(%q)", s)
	}
}
