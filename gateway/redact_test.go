package gateway_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"/var/ckpt":                             "/var/ckpt",
		"s3://b/ck?region=eu-west-1&endpoint=x": "s3://b/ck?region=eu-west-1&endpoint=x", // nothing to mask: unchanged
		"s3://b/ck?z=1&a=2":                     "s3://b/ck?z=1&a=2",
		"s3://AKID:pw@b/ck":                     "s3://REDACTED@b/ck",
		"https://h/hook?token=tk9&x=1":          "https://h/hook?token=REDACTED&x=1",
		"az://a/c/ck?endpoint=http%3A%2F%2Fu%3Apw%40h%3A1%2Fa": "az://a/c/ck?endpoint=http%3A%2F%2FREDACTED%40h%3A1%2Fa",
		// Not URLs (a bad escape): masked as text.
		"s3://AK:pw@b/c%zz":             "s3://REDACTED@b/c%zz",
		"az://a/c%zz?sv=1&sig=pw&se=2":  "az://a/c%zz?sv=1&sig=REDACTED&se=2",
		"https://h/%zz?x=1&token=tk9#f": "https://h/%zz?x=1&token=REDACTED#f",
	} {
		got := gateway.Redact(raw)
		if got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
		for _, s := range []string{"pw", "tk9"} {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q shows %q", raw, got, s)
			}
		}
	}
}

func TestParseURLErrorHidesSecrets(t *testing.T) {
	_, err := gateway.ParseURL("s3://AK:pw@b/c%zz?token=tk9")
	if err == nil {
		t.Fatal("a bad escape parsed")
	}
	for _, s := range []string{"pw", "tk9"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%v shows %q", err, s)
		}
	}
}
