package gateway_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Nothing to hide: unchanged, byte for byte.
		{"/var/ckpt", "/var/ckpt"},
		{"offsets/0", "offsets/0"},
		{"", ""},
		{"s3://b/ck?region=eu-west-1&endpoint=x", "s3://b/ck?region=eu-west-1&endpoint=x"},
		{"s3://b/ck?path_style=true&part_size=8MiB&max_attempts=3&profile=dev", "s3://b/ck?path_style=true&part_size=8MiB&max_attempts=3&profile=dev"},
		{"gs://b/ck?project=p&endpoint=http://127.0.0.1:4443&anonymous=true", "gs://b/ck?project=p&endpoint=http://127.0.0.1:4443&anonymous=true"},
		{"az://a/c/ck?auth=key", "az://a/c/ck?auth=key"},
		{"the store is in use by q1 since 12:00", "the store is in use by q1 since 12:00"},
		{"kind=http path=/x format=jsonl", "kind=http path=/x format=jsonl"},
		{"file:///tmp/a@b/ck", "file:///tmp/a@b/ck"},
		{"http://[::1]:8080/a@b", "http://[::1]:8080/a@b"},
		// Every value of a parameter not on the list, whatever its name.
		{"s3://b/ck?z=1&a=2", "s3://b/ck?z=REDACTED&a=REDACTED"},
		{"https://h/hook?token=tk9&x=1", "https://h/hook?token=REDACTED&x=REDACTED"},
		{"https://f.azurewebsites.net/api/h?code=SECRETCODE", "https://f.azurewebsites.net/api/h?code=REDACTED"},
		{"https://h/p?auth=AU1&passwd=P1&pwd=P2&jwt=J1", "https://h/p?auth=REDACTED&passwd=REDACTED&pwd=REDACTED&jwt=REDACTED"},
		{"https://h/p#access_token=SECRET2&token_type=bearer", "https://h/p#REDACTED"},
		{"https://h/p?code=SECRET&x=1#access_token=SECRET2", "https://h/p?code=REDACTED&x=REDACTED#REDACTED"},
		// Mixed case, repeated, ';' separators, percent-encoded names, bare values.
		{"https://h/p?CODE=S1&Code=S2&code=S3", "https://h/p?CODE=REDACTED&Code=REDACTED&code=REDACTED"},
		{"https://h/p?REGION=eu&Region=us", "https://h/p?REGION=eu&Region=us"},
		{"https://h/p?a=S1;code=S2;region=eu", "https://h/p?a=REDACTED;code=REDACTED;region=eu"},
		{"https://h/p?c%6Fde=S1&r%65gion=eu", "https://h/p?c%6Fde=REDACTED&r%65gion=eu"},
		{"https://h/p?SECRETBARE&code=", "https://h/p?REDACTED&code="},
		{"az://a/c?sv=1&sig=Zq&se=2", "az://a/c?sv=REDACTED&sig=REDACTED&se=REDACTED"},
		{"https://h/p?auth=key", "https://h/p?auth=REDACTED"}, // safe on az:// only
		// User info, with and without a password, and an unescaped '/' in it.
		{"s3://AKID:Zq@b/ck", "s3://REDACTED@b/ck"},
		{"https://user@h/p", "https://REDACTED@h/p"},
		{"s3://AK:wJal/rXUt@b/ck?region=r", "s3://REDACTED@b/ck?region=r"},
		{"https://h:8443/a@b", "https://h:8443/a@b"},
		// URLs inside values: a safe one is redacted in turn, escaped or not.
		{"az://a/c/ck?endpoint=http%3A%2F%2Fu%3AZq%40h%3A1%2Fa", "az://a/c/ck?endpoint=http%3A%2F%2FREDACTED%40h%3A1%2Fa"},
		{"s3://b/ck?endpoint=http://u:Zq@h:9000", "s3://b/ck?endpoint=http://REDACTED@h:9000"},
		{"s3://b/ck?endpoint=http://h/?sig=Zq&region=r", "s3://b/ck?endpoint=http://h/?sig=REDACTED&region=r"},
		{"s3://b/ck?next=http://h/?region=r", "s3://b/ck?next=REDACTED"},
		{"s3://b/ck?region=eu%26code%3DZq", "s3://b/ck?region=REDACTED"},
		{`s3://b/ck?region=eu\u0026code=Zq`, `s3://b/ck?region=REDACTED`},
		// Not URLs (a bad escape): the same rules.
		{"s3://AK:Zq@b/c%zz", "s3://REDACTED@b/c%zz"},
		{"az://a/c%zz?sv=1&sig=Zq&se=2", "az://a/c%zz?sv=REDACTED&sig=REDACTED&se=REDACTED"},
		{"https://h/%zz?x=1&token=tk9#f", "https://h/%zz?x=REDACTED&token=REDACTED#REDACTED"},
		// Free text with several URLs, quoted as SDKs and %q do.
		{`Post "https://h/hook?code=Zq1": dial tcp 127.0.0.1:1: connect: connection refused`,
			`Post "https://h/hook?code=REDACTED": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"from s3://u:Zq@b/x?region=r, to https://h/y?tok=Zq2#Zq3. Done",
			"from s3://REDACTED@b/x?region=r, to https://h/y?tok=REDACTED#REDACTED. Done"},
		{"(see https://h/p?a=Zq)", "(see https://h/p?a=REDACTED)"},
		// Query strings and connection strings without a scheme.
		{"token sv=2024&sp=rl&sig=Zq%2B%3D here", "token sv=REDACTED&sp=REDACTED&sig=REDACTED here"},
		{"/var/ck?code=Zq&region=r", "/var/ck?code=REDACTED&region=r"},
		{"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=Zq==;BlobEndpoint=http://127.0.0.1:10000/a;",
			"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=REDACTED;BlobEndpoint=http://127.0.0.1:10000/a;"},
		{"SharedAccessSignature=sv=1&sig=Zq;AccountName=a", "SharedAccessSignature=REDACTED&sig=REDACTED;AccountName=a"},
		{"AccountKey=Zq==;", "AccountKey=REDACTED;"},
		// Text rules: secret-looking pairs, tokens, key ids.
		{"password = Zq ok", "password = REDACTED ok"},
		{"login with code=Zq1 failed", "login with code=REDACTED failed"},
		{"Authorization: Bearer ZqZqZqZqZq", "Authorization: Bearer REDACTED"},
		{"Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f", "Bearer REDACTED"},
		{"got ya29.a0AfH6SMBxxxxxxxxxxxx", "got REDACTED"},
		{"access key AKIAIOSFODNN7EXAMPLE refused", "access key ****MPLE refused"},
		{"https://h/AKIAIOSFODNN7EXAMPLE/x", "https://h/****MPLE/x"},
	} {
		got := gateway.Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		for _, s := range []string{"Zq", "tk9", "SECRET", "S1", "S2", "S3", "P1", "P2", "J1", "AU1"} {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q shows %q", tc.in, got, s)
			}
		}
		if again := gateway.Redact(got); again != got {
			t.Errorf("Redact is not idempotent on %q: %q", got, again)
		}
	}
}

func TestMaskID(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"AKIAIOSFODNN7EXAMPLE": "****MPLE",
		"CKGATEAKIDABCDEFGHIJ": "****GHIJ",
		"shortid":              "****",
		"abcdefghijk":          "****",
		"abcdefghijkl":         "****ijkl",
	} {
		if got := gateway.MaskID(in); got != want {
			t.Errorf("MaskID(%q) = %q, want %q", in, got, want)
		}
		if len(in) >= 4 && strings.Contains(gateway.MaskID(in), in[:len(in)-4]) && len(in) > 4 {
			t.Errorf("MaskID(%q) shows more than the last 4 characters", in)
		}
	}
}

func TestSafeParam(t *testing.T) {
	for _, tc := range []struct {
		scheme, name string
		want         bool
	}{
		{"s3", "region", true}, {"s3", "Region", true}, {"s3", "r%65gion", true},
		{"az", "auth", true}, {"https", "auth", false}, {"", "auth", false},
		{"https", "code", false}, {"s3", "external_id", false}, {"az", "sig", false},
	} {
		if got := gateway.SafeParam(tc.scheme, tc.name); got != tc.want {
			t.Errorf("SafeParam(%q, %q) = %v", tc.scheme, tc.name, got)
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

func BenchmarkRedact(b *testing.B) {
	for name, s := range map[string]string{
		"key":     "state/0/1/12.delta.0f3a9c",
		"url":     "s3://bucket/ck?region=eu-west-1&endpoint=http://127.0.0.1:9000&path_style=true",
		"message": `Post "https://f.azurewebsites.net/api/h?code=abcdefgh&x=1#access_token=zzz": dial tcp 127.0.0.1:1: connect: connection refused`,
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				gateway.Redact(s)
			}
		})
	}
}
