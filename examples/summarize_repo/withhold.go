package main

import (
	"bytes"
	"regexp"
)

// contentRule withholds a file whose first bytes match.
type contentRule struct {
	what  string                 // what such a file holds, for the rule's name
	match func(head []byte) bool // whether head looks like one
}

var (
	privateKeyPEM   = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
	serviceAccount  = regexp.MustCompile(`"type"\s*:\s*"service_account"`)
	jsonPrivateKey  = regexp.MustCompile(`"private_key(_id)?"\s*:`)
	awsSecret       = regexp.MustCompile(`(?i)\baws_secret_access_key\s*[=:]`)
	kubeconfigKind  = regexp.MustCompile(`(?m)^kind:\s*["']?Config["']?\s*$`)
	kubeconfigUsers = regexp.MustCompile(`(?m)^users:`)
)

// credentialRules are the content rules of the withholding rule, in the
// order they are tried.
var credentialRules = []contentRule{
	{"a private key", privateKeyPEM.Match},
	{"a PuTTY key", func(b []byte) bool { return bytes.Contains(b, []byte("PuTTY-User-Key-File-")) }},
	{"a service-account key", func(b []byte) bool { return serviceAccount.Match(b) && jsonPrivateKey.Match(b) }},
	{"an AWS secret key", awsSecret.Match},
	{"a kubeconfig", func(b []byte) bool {
		return bytes.Contains(b, []byte("client-key-data:")) || (kubeconfigKind.Match(b) && kubeconfigUsers.Match(b))
	}},
}

// credentialContent returns the rule that withholds a file whose first
// bytes are head, or "" when none does: a PEM private key (RSA, EC,
// OpenSSH, PKCS #8, encrypted, PGP), a PuTTY key, a cloud service-account
// key (JSON with "type": "service_account" and a private_key), an AWS
// secret access key, or a kubeconfig (kind: Config with users:, or a
// client-key-data entry). Like
// the name rule, it names the rule and never the content.
func credentialContent(head []byte) string {
	for _, r := range credentialRules {
		if r.match(head) {
			return `"credential-content" (no file holding ` + r.what + `)`
		}
	}
	return ""
}
