package s3serve

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/valyala/fasthttp"
)

func FuzzParseCredentials(f *testing.F) {
	f.Add([]byte("principals:\n  - access_key: A\n    secret_key: supersecret\n    principal: p\n    kind: job\n"))
	f.Add([]byte("principals: []\n"))
	f.Add([]byte("principals:\n  - access_key: A\n    secret_key: s1\n    principal: p\n    kind: job\n  - access_key: A\n    secret_key: s2\n    principal: q\n    kind: admin\n"))
	f.Add([]byte("{{{"))
	f.Add([]byte("principals:\n  - {access_key: A, secret_key: topsecret, principal: p, kind: janitor}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCredentials(data)
		if err != nil {
			// An error names an entry by position and access key only.
			for _, secret := range []string{"supersecret", "topsecret", "s1", "s2"} {
				if strings.Contains(string(data), secret) && strings.Contains(err.Error(), "secret_key: "+secret) {
					t.Fatalf("error shows a secret: %v", err)
				}
			}
			return
		}
		if len(c.Principals) == 0 {
			t.Fatal("parsed with no principals")
		}
		for _, p := range c.Principals {
			got, ok := c.Lookup(p.AccessKey)
			if !ok || got.SecretKey == "" || got.ID == "" {
				t.Fatalf("principal %s not found or incomplete", p.AccessKey)
			}
			if strings.Contains(got.String(), got.SecretKey) && !strings.Contains(got.ID+got.Kind+got.AccessKey, got.SecretKey) {
				t.Fatalf("String shows the secret: %s", got)
			}
		}
	})
}

func FuzzIsLogEntry(f *testing.F) {
	for _, k := range []string{"q/metadata", "q/offsets/12", "q/commits/0", "q/sources/0/3.compact", "out/_spark_metadata/9",
		"q/offsets/.12.uuid.tmp", "q/state/0/1/2.delta", "q/state/0/_metadata/metadata", "metadata", "offsets/", "a//b"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if !IsLogEntry(key) {
			return
		}
		name := key[strings.LastIndex(key, "/")+1:]
		if name != "metadata" && !gateway.AllDigits(strings.TrimSuffix(name, ".compact")) {
			t.Fatalf("%q: a log entry named %q", key, name)
		}
		if strings.HasSuffix(name, ".tmp") {
			t.Fatalf("%q: a temp taken for a log entry", key)
		}
	})
}

func TestIsLogEntry(t *testing.T) {
	for key, want := range map[string]bool{
		"q/metadata": true, "q/offsets/12": true, "q/commits/0": true, "q/sources/0/3": true, "q/sources/0/3.compact": true,
		"out/_spark_metadata/9": true, "out/_spark_metadata/19.compact": true, "metadata": true,
		"q/offsets/.12.0f3a.tmp": false, "q/offsets/12.crc": false, "q/state/0/1/2.delta": false,
		"q/state/0/_metadata/metadata": false, "q/commits/": false, "q/offsets/x1": false, "q/data/part-0": false,
	} {
		if got := IsLogEntry(key); got != want {
			t.Errorf("IsLogEntry(%q) = %v, want %v", key, got, want)
		}
	}
}

func FuzzReferrerProcess(f *testing.F) {
	f.Add("https://audit.example.org/hadoop/1/op_create/3c0d-3/?op=op_create&p1=s3a://b/q&pr=alice&ps=235865a0-d399-4696-9978-64568db1b51c&id=3c0d-3&t0=12&ts=1617116985923")
	f.Add("https://audit.example.org/?ps=")
	f.Add("https://audit.example.org/?ps=a%20b")
	f.Add("%%%")
	f.Add("")
	f.Fuzz(func(t *testing.T, ref string) {
		var rc fasthttp.RequestCtx
		rc.Request.Header.Set("Referer", ref)
		ps := referrerProcess(&rc)
		if len(ps) > 128 || strings.ContainsAny(ps, " \t\r\n\x00") {
			t.Fatalf("process %q accepted", ps)
		}
		if ps != "" && !strings.Contains(ref, "ps=") {
			t.Fatalf("process %q from a referrer without ps: %q", ps, ref)
		}
	})
}
