package streamablehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ErrUnauthorized is wrapped by the errors BearerAuthenticator returns and
// should be wrapped by those of any Authenticator, so that callers can
// recognise an authentication failure with errors.Is.
var ErrUnauthorized = errors.New("streamablehttp: unauthorized")

// defaultChallenge is the WWW-Authenticate value sent with a 401 when the
// authenticator names no other.
const defaultChallenge = "Bearer"

// Authenticator decides who sent a request. It returns what it learned of
// the caller's credentials (nil for an anonymous but accepted request) or
// an error, which the Handler answers with 401 Unauthorized and a
// WWW-Authenticate header. The header
// value is taken from the error when it has a method Challenge() string
// (as the errors of BearerAuthenticator do), else it is "Bearer".
// An error wrapping ErrForbidden (a valid token without the scope the
// server needs) is answered 403 Forbidden instead, with its challenge, for
// example `Bearer error="insufficient_scope", scope="files:read"`. The
// error itself goes only to the logger, never to the client.
//
// The token's Subject is the request's principal: it reaches handlers as
// mrtr.Request.Principal (the whole token as mrtr.Request.Token) and is
// bound into every requestState, so a state issued to one principal is
// refused for another. A token without a Subject is refused: an
// authenticated caller nobody can name would share the anonymous
// principal's states.
type Authenticator func(r *http.Request) (*mrtr.TokenInfo, error)

// authError carries the challenge to send with a refusal.
type authError struct {
	challenge string
	err       error
}

func (e *authError) Error() string     { return e.err.Error() }
func (e *authError) Unwrap() error     { return e.err }
func (e *authError) Challenge() string { return e.challenge }

// ErrForbidden marks an authentication failure where the caller is known
// but lacks the scope the server needs: the Handler answers 403 rather
// than 401. Wrap it, and give the error a Challenge() string method to set
// WWW-Authenticate (see Forbidden).
var ErrForbidden = errors.New("streamablehttp: insufficient scope")

// Forbidden returns an error for an Authenticator that refuses a caller
// lacking scope: 403 Forbidden with the given WWW-Authenticate challenge.
func Forbidden(challenge string) error {
	return &authError{challenge: challenge, err: ErrForbidden}
}

// challengeOf returns the WWW-Authenticate value for an authentication
// failure.
func challengeOf(err error) string {
	var c interface{ Challenge() string }
	if errors.As(err, &c) {
		if v := c.Challenge(); v != "" {
			return v
		}
	}
	return defaultChallenge
}

// BearerAuthenticator returns an Authenticator for OAuth 2.0 bearer tokens
// (RFC 6750). It reads "Authorization: Bearer <token>", the scheme matched
// regardless of case, and passes the token to verify, whose TokenInfo it
// returns; a TokenInfo without a Subject is refused. A missing, repeated or malformed Authorization header, or any
// error from verify, is refused with an error wrapping ErrUnauthorized,
// except an error from Forbidden, which is answered 403.
//
// challenge is the WWW-Authenticate value sent with the 401, for example
// `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`
// so that clients can discover the authorization server; "" means
// "Bearer".
func BearerAuthenticator(verify func(ctx context.Context, token string) (*mrtr.TokenInfo, error), challenge string) Authenticator {
	if challenge == "" {
		challenge = defaultChallenge
	}
	refuse := func(err error) error { return &authError{challenge: challenge, err: err} }
	return func(r *http.Request) (*mrtr.TokenInfo, error) {
		lines := r.Header["Authorization"]
		switch len(lines) {
		case 0:
			return nil, refuse(fmt.Errorf("%w: no Authorization header", ErrUnauthorized))
		case 1:
		default:
			return nil, refuse(fmt.Errorf("%w: more than one Authorization header", ErrUnauthorized))
		}
		token, ok := bearerToken(lines[0])
		if !ok {
			return nil, refuse(fmt.Errorf("%w: Authorization header is not \"Bearer <token>\"", ErrUnauthorized))
		}
		info, err := verify(r.Context(), token)
		if err != nil {
			if errors.Is(err, ErrForbidden) {
				return nil, err // a known caller without scope: 403, its own challenge
			}
			if !errors.Is(err, ErrUnauthorized) {
				err = fmt.Errorf("%w: %w", ErrUnauthorized, err)
			}
			return nil, refuse(err)
		}
		if info == nil || info.Subject == "" {
			return nil, refuse(fmt.Errorf("%w: the token names no subject", ErrUnauthorized))
		}
		return info, nil
	}
}

// bearerToken extracts the token68 of a Bearer credential.
func bearerToken(v string) (string, bool) {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if !isToken68(token) {
		return "", false
	}
	return token, true
}

// isToken68 reports whether s is an RFC 9110 token68:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
