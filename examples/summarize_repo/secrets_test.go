package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (slash-separated path -> content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// secretsByName are files the name rule withholds (L6 of the security
// review and their kin), each holding the word TOPSECRET and nothing
// the content rule would catch.
var secretsByName = []string{
	"kubeconfig", "kubeconfig-prod.yaml", "clusters/dev.kubeconfig",
	"terraform.tfvars", "env/prod.auto.tfvars", "vars.tfvars.json",
	"putty.ppk", "keys/server.PPK",
	"deploy_key", "deploy_key.txt", "ssh_host_ed25519_key", "github_rsa", "backup_ed25519",
	"gcp-sa.json", "ci_sa.json", "service-account.json", "my-service_account-key.json", "serviceaccount.json", "app-sa-key-1.json",
	"application_default_credentials.json", "gcp-credentials.json", "token.json", "github.token",
	"htpasswd", "web.htpasswd", "client.ovpn", "server.keytab", "AuthKey_ABC123.p8",
	"private.asc", "secring.gpg", "store.jceks", "cert.pkcs12", "db.secret", "wp-config.php", "shadow",
}

func TestMoreSecretNamesAreWithheld(t *testing.T) {
	root := testTree(t)
	files := map[string]string{}
	for _, rel := range secretsByName {
		files[rel] = "TOPSECRET=1\n"
	}
	writeTree(t, root, files)
	r := openTestRepo(t, root, Limits{})
	l, err := r.List()
	require.NoError(t, err)
	for _, rel := range secretsByName {
		assert.NotContains(t, l.Paths, rel)
		f, err := r.Read(rel, 100)
		var we *WithheldError
		if assert.True(t, errors.As(err, &we), "Read(%q) = %q, %v; want a *WithheldError", rel, f.Text, err) {
			assert.Contains(t, we.Rule, `"credential-name"`, rel)
			assert.NotContains(t, we.Error(), "TOPSECRET")
		}
	}
	// Ordinary names that look a little like those stay listed.
	assert.Subset(t, l.Paths, []string{"README.md", "main.go", "sub/a.txt"})

	t.Run("include hidden", func(t *testing.T) {
		r, err := OpenRepo(root, Limits{MaxFileSize: 2048}, IncludeHidden())
		require.NoError(t, err)
		defer r.Close()
		l, err := r.List()
		require.NoError(t, err)
		assert.Subset(t, l.Paths, secretsByName)
	})
}

// secretsByContent are files with innocent names whose content the
// content rule withholds.
var secretsByContent = map[string]string{
	"notes.txt":          "my key\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
	"docs/rsa.txt":       "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
	"pkcs8.txt":          "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n",
	"pgp.txt":            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n",
	"ec.crt":             "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n",
	"putty.txt":          "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAASECRET\n",
	"config/gcp.json":    "{\n  \"type\": \"service_account\",\n  \"project_id\": \"p\",\n  \"private_key_id\": \"abc\",\n  \"client_email\": \"x@p.iam.gserviceaccount.com\"\n}\n",
	"config/aws.ini":     "[default]\naws_access_key_id = AKIAEXAMPLE\nAWS_SECRET_ACCESS_KEY = hunter2\n",
	"cluster.yaml":       "apiVersion: v1\nkind: Config\nclusters:\n- name: c\nusers:\n- name: u\n  user:\n    token: eyJSECRET\n",
	"cluster-cert.yaml":  "users:\n- name: u\n  user:\n    client-key-data: LS0tLS1CRUdJTi\n",
	"sa-with-key.json":   `{"type":"service_account","private_key":"x"}`,
	"src/fixtures/k.txt": "a test fixture\n\n-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n-----END PRIVATE KEY-----\n",
}

func TestSecretContentIsWithheld(t *testing.T) {
	root := testTree(t)
	writeTree(t, root, secretsByContent)
	// Text that talks about such things without holding them is served.
	innocent := map[string]string{
		"public.txt":       "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----\n",
		"docs/accounts.md": "Set \"type\": \"service_account\" in the JSON you download.\n",
		"deploy/app.yaml":  "apiVersion: apps/v1\nkind: Deployment\n",
		"docs/aws.md":      "Put aws_secret_access_key in ~/.aws/credentials, never here.\n",
	}
	writeTree(t, root, innocent)
	r := openTestRepo(t, root, Limits{})
	l, err := r.List()
	require.NoError(t, err)
	for rel := range secretsByContent {
		assert.NotContains(t, l.Paths, rel)
		f, err := r.Read(rel, 100)
		var we *WithheldError
		if assert.True(t, errors.As(err, &we), "Read(%q) = %q, %v; want a *WithheldError", rel, f.Text, err) {
			assert.Contains(t, we.Rule, `"credential-content"`, rel)
			for _, secret := range []string{"SECRET", "hunter2", "BEGIN", "b3Bl", "MIIE"} {
				assert.NotContains(t, we.Error(), secret, "the rule never quotes the content")
			}
		}
	}
	for rel := range innocent {
		assert.Contains(t, l.Paths, rel)
	}

	t.Run("include hidden", func(t *testing.T) {
		r, err := OpenRepo(root, Limits{MaxFileSize: 2048}, IncludeHidden())
		require.NoError(t, err)
		defer r.Close()
		f, err := r.Read("config/aws.ini", 200)
		require.NoError(t, err)
		assert.Contains(t, f.Text, "hunter2")
	})
}

// hardLinkTree is testTree with outside/secret.txt (beside the tree)
// linked into it as hardlink.txt, and README.md given a second name
// inside the tree.
func hardLinkTree(t *testing.T) string {
	t.Helper()
	root := testTree(t)
	outside := filepath.Join(filepath.Dir(root), "outside", "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("TOP SECRET\n"), 0o644))
	if err := os.Link(outside, filepath.Join(root, "hardlink.txt")); err != nil {
		unavailable(t, "link: %v", err)
	}
	if err := os.Link(filepath.Join(root, "main.go"), filepath.Join(root, "sub", "main-again.go")); err != nil {
		unavailable(t, "link: %v", err)
	}
	return root
}

// L6 of the security review: a hard link reads a file outside the tree,
// which no path check can see. A regular file with more than one link is
// neither listed nor read, even with IncludeHidden; both names of a
// file linked within the tree are refused too.
func TestHardLinksAreRefused(t *testing.T) {
	root := hardLinkTree(t)
	if linkCount(mustStat(t, filepath.Join(root, "hardlink.txt"))) < 2 {
		unavailable(t, "this system does not report hard links")
	}
	for _, opts := range [][]RepoOption{nil, {IncludeHidden()}} {
		r, err := OpenRepo(root, Limits{MaxFileSize: 2048}, opts...)
		require.NoError(t, err)
		l, err := r.List()
		require.NoError(t, err)
		for _, rel := range []string{"hardlink.txt", "main.go", "sub/main-again.go"} {
			assert.NotContains(t, l.Paths, rel)
			f, err := r.Read(rel, 100)
			require.ErrorIs(t, err, ErrNotEligible, "Read(%q) = %q", rel, f.Text)
			assert.Contains(t, err.Error(), "has 2 hard links")
			assert.NotContains(t, err.Error(), "TOP SECRET")
		}
		assert.Contains(t, l.Paths, "README.md")
		r.Close()
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(p)
	require.NoError(t, err)
	return info
}

// The review's reproduction over the wire: a tree holding a hard link to
// a file outside it and the secret files it named. None is offered to the
// model, every pick of one is refused with -32602, and no reply holds a
// secret.
func TestReviewSecretsOnTheWire(t *testing.T) {
	root := hardLinkTree(t)
	writeTree(t, root, map[string]string{
		"kubeconfig":       "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: eyJSECRET\n",
		"terraform.tfvars": "db_password = \"hunter2\"\n",
		"putty.ppk":        "PuTTY-User-Key-File-2: ssh-rsa\nAAAASECRET\n",
		"server.ppk":       "PuTTY-User-Key-File-2: ssh-rsa\nAAAASECRET\n",
		"deploy_key":       "-----BEGIN OPENSSH PRIVATE KEY-----\nPRIVATE KEY\n",
		"gcp-sa.json":      `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nPRIVATE KEY\n"}`,
		"src/main.go":      "package main\n",
	})
	s := startServer(t, Config{Dir: root}, nil)
	text, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
	for _, name := range []string{"hardlink.txt", "kubeconfig", "terraform.tfvars", "putty.ppk", "server.ppk", "deploy_key", "gcp-sa.json"} {
		assert.NotContains(t, text, name, "the pick_files prompt offers %s", name)
	}
	assert.Contains(t, text, "src/main.go")
	for _, pick := range []string{`["hardlink.txt"]`, `["kubeconfig","terraform.tfvars","putty.ppk"]`, `["deploy_key","gcp-sa.json"]`, `["server.ppk"]`} {
		r := s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(pick)}})
		r.wantError(t, -32602, 200)
		assert.True(t, strings.Contains(r.Error.Message, "withheld by rule") || strings.Contains(r.Error.Message, "not one of the listed paths"),
			"%s: %s", pick, r.raw)
		for _, secret := range []string{"TOP SECRET", "eyJSECRET", "hunter2", "AAAASECRET", "PRIVATE KEY"} {
			assert.False(t, bytes.Contains(r.raw, []byte(secret)), "%s: reply holds %s: %s", pick, secret, r.raw)
		}
	}
}
