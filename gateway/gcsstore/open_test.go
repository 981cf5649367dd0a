package gcsstore

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := gateway.ParseURL(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw  string
		want Config
		err  string // substring of the error; "" means success
	}{
		{raw: "gs://my-bucket", want: Config{Bucket: "my-bucket"}},
		{raw: "gs://my-bucket/", want: Config{Bucket: "my-bucket"}},
		{raw: "GS://my-bucket/ckpt/q1/", want: Config{Bucket: "my-bucket", Prefix: "ckpt/q1/"}},
		{raw: "gs://my.bucket.example.com/a", want: Config{Bucket: "my.bucket.example.com", Prefix: "a/"}},
		{raw: "gs://b_1/x?project=p-1", want: Config{Bucket: "b_1", Prefix: "x/", Project: "p-1"}},
		{raw: "gs://bkt?credentials_file=/etc/sa.json", want: Config{Bucket: "bkt", CredentialsFile: "/etc/sa.json"}},
		{
			raw:  "gs://bkt?impersonate=job@p.iam.gserviceaccount.com&delegates=a@p.iam.gserviceaccount.com,b@p.iam.gserviceaccount.com",
			want: Config{Bucket: "bkt", Impersonate: "job@p.iam.gserviceaccount.com", Delegates: []string{"a@p.iam.gserviceaccount.com", "b@p.iam.gserviceaccount.com"}},
		},
		{raw: "gs://bkt?endpoint=http://127.0.0.1:4443/storage/v1/&anonymous=true", want: Config{Bucket: "bkt", Endpoint: "http://127.0.0.1:4443/storage/v1/", Anonymous: true}},
		{raw: "gs://bkt?anonymous=false", want: Config{Bucket: "bkt"}},
		{raw: "gs://bkt/caf%C3%A9/%E6%97%A5", want: Config{Bucket: "bkt", Prefix: "café/日/"}},

		{raw: "s3://bkt", err: "scheme"},
		{raw: "gs://", err: "no bucket"},
		{raw: "gs:bkt", err: "want gs://BUCKET"},
		{raw: "gs://ab", err: "3 to 63"},
		{raw: "gs://" + strings.Repeat("a", 64), err: "3 to 63"},
		{raw: "gs://My-Bucket", err: "lowercase"},
		{raw: "gs://-bucket", err: "start and end"},
		{raw: "gs://bucket-", err: "start and end"},
		{raw: "gs://a..b", err: "dot-separated"},
		{raw: "gs://goog-bucket", err: "goog"},
		{raw: "gs://bkt:443/x", err: "lowercase"},
		{raw: "gs://user:secret@bkt/x", err: "user information"},
		{raw: "gs://bkt/x#frag", err: "fragment"},
		{raw: "gs://bkt/a//b", err: "prefix"},
		{raw: "gs://bkt/a/../b", err: "prefix"},
		{raw: "gs://bkt/a%0Ab", err: "CR or LF"},
		{raw: "gs://bkt/" + strings.Repeat("p", 1023), err: "prefix longer"},
		{raw: "gs://bkt?region=us", err: `unknown parameter "region"`},
		{raw: "gs://bkt?project=a&project=b", err: "2 times"},
		{raw: "gs://bkt?project=", err: "empty"},
		{raw: "gs://bkt?anonymous=maybe", err: "boolean"},
		{raw: "gs://bkt?anonymous=1&credentials_file=/x", err: "excludes"},
		{raw: "gs://bkt?impersonate=job", err: "no service account email"},
		{raw: "gs://bkt?delegates=a@p", err: "needs impersonate"},
		{raw: "gs://bkt?impersonate=a@p&delegates=a@p,,b@p", err: "no service account email"},
		{raw: "gs://bkt?endpoint=ftp://x", err: "http(s)"},
		{raw: "gs://bkt?endpoint=//x", err: "http(s)"},
		{raw: "gs://bkt?project=%zz", err: "query"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseURL(u)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseURL(%q) = %+v, %v; want an error with %q", tc.raw, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tc.raw, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseURL(%q) = %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}

// TestParseURLRedacts: errors never show user information or secret-looking
// parameter values.
func TestParseURLRedacts(t *testing.T) {
	for _, raw := range []string{
		"gs://user:hunter2@bkt/x",
		"gs://bkt?token=hunter2",
		"gs://BAD?credentials_file=/secrets/hunter2.json",
	} {
		_, err := ParseURL(mustParse(t, raw))
		if err == nil {
			t.Fatalf("ParseURL(%q): no error", raw)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) error shows a secret: %v", raw, err)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"gs://bkt", "gs://bkt/a/b/", "gs://bkt/p?project=x&anonymous=true",
		"gs://bkt?impersonate=a@b&delegates=c@d,e@f", "gs://bkt?endpoint=http://127.0.0.1:1/storage/v1/",
		"gs://a.b-c_d/%E2%82%AC", "gs://bkt/a//b", "gs://bkt/..", "gs://x", "gs://bkt?%zz", "gs://u:p@bkt",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		cfg, err := ParseURL(u)
		if err != nil {
			return
		}
		if validBucket(cfg.Bucket) != nil {
			t.Fatalf("accepted bucket %q", cfg.Bucket)
		}
		if cfg.Prefix != "" {
			if !strings.HasSuffix(cfg.Prefix, "/") {
				t.Fatalf("prefix %q lacks its '/'", cfg.Prefix)
			}
			if err := gateway.ValidatePrefix(cfg.Prefix); err != nil {
				t.Fatalf("accepted prefix %q: %v", cfg.Prefix, err)
			}
			if err := gateway.ValidateKey("k", cfg.Prefix+"k"); err != nil {
				t.Fatalf("prefix %q makes key k invalid: %v", cfg.Prefix, err)
			}
		}
		if cfg.Anonymous && (cfg.CredentialsFile != "" || cfg.Impersonate != "") {
			t.Fatalf("anonymous with credentials: %+v", cfg)
		}
		if len(cfg.Delegates) > 0 && cfg.Impersonate == "" {
			t.Fatalf("delegates without impersonate: %+v", cfg)
		}
	})
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCredentialsFile: the file's type is read and checked; errors name the
// file and never show its content.
func TestCredentialsFile(t *testing.T) {
	const secret = "-----BEGIN PRIVATE KEY-----hunter2"
	tests := []struct {
		name, content, err string
	}{
		{"service account", `{"type":"service_account","private_key":"` + secret + `"}`, ""},
		{"authorized user", `{"type":"authorized_user","refresh_token":"` + secret + `"}`, ""},
		{"external account", `{"type":"external_account","audience":"x"}`, ""},
		{"unknown type", `{"type":"gdc_service_account","private_key":"` + secret + `"}`, "unsupported credentials type"},
		{"no type", `{"private_key":"` + secret + `"}`, "no \"type\""},
		{"not JSON", `private_key=` + secret, "not a JSON credentials file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "creds.json", tc.content)
			_, err := credentialsType(p)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v; want one naming %q with %q", err, p, tc.err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the file's content: %v", err)
			}
		})
	}
	_, err := credentialsType(filepath.Join(t.TempDir(), "missing.json"))
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// TestClientOptions builds real clients from the credential parameters
// without the emulator (no request is made).
func TestClientOptions(t *testing.T) {
	t.Setenv(EmulatorHostEnv, "")
	sa := writeFile(t, "user.json", `{"type":"authorized_user","client_id":"id","client_secret":"s","refresh_token":"r"}`)
	for _, raw := range []string{
		"gs://bkt?anonymous=true",
		"gs://bkt?credentials_file=" + url.QueryEscape(sa),
		"gs://bkt?credentials_file=" + url.QueryEscape(sa) + "&impersonate=job@p.iam.gserviceaccount.com",
		"gs://bkt?credentials_file=" + url.QueryEscape(sa) + "&impersonate=job@p.iam.gserviceaccount.com&delegates=d@p.iam.gserviceaccount.com",
		"gs://bkt/p?anonymous=true&endpoint=https://storage.example.com/storage/v1/",
	} {
		t.Run(raw, func(t *testing.T) {
			s, err := Open(t.Context(), mustParse(t, raw))
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if err := gateway.Close(s); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

// TestOpenRefusesCredentialsWithEmulator: with STORAGE_EMULATOR_HOST set,
// credential parameters cannot apply and are refused, not ignored.
func TestOpenRefusesCredentialsWithEmulator(t *testing.T) {
	t.Setenv(EmulatorHostEnv, "127.0.0.1:1")
	sa := writeFile(t, "sa.json", `{"type":"service_account"}`)
	for _, raw := range []string{
		"gs://bkt?credentials_file=" + url.QueryEscape(sa),
		"gs://bkt?impersonate=job@p.iam.gserviceaccount.com",
	} {
		if s, err := Open(t.Context(), mustParse(t, raw)); err == nil {
			gateway.Close(s)
			t.Errorf("Open(%q) under an emulator: no error", raw)
		} else if !strings.Contains(err.Error(), EmulatorHostEnv) {
			t.Errorf("Open(%q): error %q does not name %s", raw, err, EmulatorHostEnv)
		}
	}
}

// TestOpen opens gs:// URLs against the emulator: the URL's prefix is
// applied inside the bucket, errors name the caller's key, and the store
// closes its own client.
func TestOpen(t *testing.T) {
	raw := newStore(t) // a bucket, and a client without the URL's prefix
	for _, u := range []string{
		"gs://" + raw.BucketName() + "/team/q1?project=ckgate-test",
		"gs://" + raw.BucketName() + "/other?anonymous=true&endpoint=" + url.QueryEscape(emu.Endpoint),
	} {
		t.Run(u, func(t *testing.T) {
			st, err := Open(t.Context(), mustParse(t, u))
			if err != nil {
				t.Fatal(err)
			}
			if err := gateway.MakeBucket(t.Context(), st); err != nil {
				t.Fatalf("make bucket (exists): %v", err)
			}
			s := st.(*Store)
			v, err := s.Put(t.Context(), "offsets/0", []byte("o0"), gateway.IfAbsent())
			if err != nil {
				t.Fatal(err)
			}
			wantObject(t, raw, s.Prefix()+"offsets/0", "o0", v)
			wantObject(t, s, "offsets/0", "o0", v)
			_, err = s.Put(t.Context(), "offsets/0", []byte("o0"), gateway.IfAbsent())
			storetest.WantKeyKind(t, "", err, "offsets/0", gateway.ErrExists)
			if strings.Contains(err.Error(), s.Prefix()) {
				t.Errorf("error %q shows the store prefix", err)
			}
			var keys []string
			for a, err := range s.List(t.Context(), "") {
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, a.Key)
			}
			if !reflect.DeepEqual(keys, []string{"offsets/0"}) {
				t.Errorf("list = %q, want [offsets/0]", keys)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("second close: %v", err)
			}
		})
	}
}
