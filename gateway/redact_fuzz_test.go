package gateway_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// FuzzRedact: Redact never panics, is idempotent, and the output never
// shows a raw query value of a parameter that is not safe, the user info
// or the fragment of a URL (as net/url parses it) — alone or inside a
// message — when that part has 4 bytes or more and does not also occur in
// the rest of the input.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"https://h/p?code=SECRET&x=1#access_token=SECRET2",
		"https://f.azurewebsites.net/api/h?c%6Fde=SECRET",
		"https://h/p?CODE=S1&code=S2;pwd=S3&jwt=J1&auth=A1&passwd=P1",
		"s3://AKID:secret@b/ck?region=eu&endpoint=http%3A%2F%2Fu%3Apw%40h",
		"s3://b/ck?endpoint=http://u:pw@h:9000/?sig=abcd&path_style=true",
		"az://a/c/ck?sv=2024&sig=abcd%2B%3D&auth=key",
		"gs://b/ck?project=p&credentials_file=/x/y.json",
		"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=abcd==;",
		"Post \"https://h/hook?token=abcd\": dial tcp: refused",
		"file:///var/ck",
		"/var/ck?x=abcd",
		"http://[::1]:80/a@b?q=abcd",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := gateway.Redact(s)
		if again := gateway.Redact(out); again != out {
			t.Fatalf("not idempotent: Redact(%q) = %q, then %q", s, out, again)
		}
		if strings.ContainsAny(s, " \t\n\r\v\f\"'`<>") {
			return // several words: the parts below are net/url's view of one
		}
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" {
			return
		}
		const before, after = "open \"", "\": failed"
		text := gateway.Redact(before + s + after)
		for _, p := range hiddenParts(s, u) {
			v := s[p.start:p.end]
			rest := before + s[:p.start] + s[p.end:] + after
			if len(v) < 4 || strings.Contains(rest, v) || strings.Contains(gateway.Redacted+"****", v) {
				continue
			}
			if strings.Contains(out, v) {
				t.Fatalf("Redact(%q) = %q shows %s %q", s, out, p.what, v)
			}
			if strings.Contains(text, v) {
				t.Fatalf("Redact of a message with %q = %q shows %s %q", s, text, p.what, v)
			}
		}
	})
}

type part struct {
	what       string
	start, end int
}

// hiddenParts are the byte ranges of s that Redact must hide, as net/url
// splits s: the user info, the fragment, and the values of the query
// parameters that are not safe.
func hiddenParts(s string, u *url.URL) []part {
	var parts []part
	body := s
	if h := strings.IndexByte(s, '#'); h >= 0 {
		parts = append(parts, part{"the fragment", h + 1, len(s)})
		body = s[:h]
	}
	q := strings.IndexByte(body, '?')
	if u.User != nil {
		if i := strings.Index(body, "//"); i >= 0 {
			auth := body[i+2:]
			if q >= 0 {
				auth = body[i+2 : q]
			}
			if j := strings.IndexByte(auth, '/'); j >= 0 {
				auth = auth[:j]
			}
			if at := strings.LastIndexByte(auth, '@'); at >= 0 {
				parts = append(parts, part{"the user info", i + 2, i + 2 + at})
			}
		}
	}
	if q < 0 {
		return parts
	}
	for off := q + 1; off <= len(body); {
		end := strings.IndexByte(body[off:], '&')
		if end < 0 {
			end = len(body)
		} else {
			end += off
		}
		if name, _, ok := strings.Cut(body[off:end], "="); ok && !gateway.SafeParam(u.Scheme, name) {
			parts = append(parts, part{"the value of " + name, off + len(name) + 1, end})
		}
		off = end + 1
	}
	return parts
}
