package s3store

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"

	"github.com/ckgate/ckgate/gateway"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	def := settings{PartSize: DefaultPartSize}
	with := func(f func(*settings)) settings {
		s := def
		f(&s)
		return s
	}
	ok := []struct {
		raw  string
		want settings
	}{
		{"s3://bucket", with(func(s *settings) { s.Bucket = "bucket" })},
		{"s3://bucket/", with(func(s *settings) { s.Bucket = "bucket" })},
		{"S3://my.bucket-1/team/q1/", with(func(s *settings) { s.Bucket, s.Prefix = "my.bucket-1", "team/q1/" })},
		{"s3://b12/p?region=eu-west-1", with(func(s *settings) { s.Bucket, s.Prefix, s.Region = "b12", "p/", "eu-west-1" })},
		{"s3://b12?endpoint=http://127.0.0.1:7070&path_style=true", with(func(s *settings) {
			s.Bucket, s.Endpoint, s.PathStyle = "b12", "http://127.0.0.1:7070", true
		})},
		{"s3://b12?path_style=false&endpoint=https://s3.example.com", with(func(s *settings) {
			s.Bucket, s.Endpoint = "b12", "https://s3.example.com"
		})},
		{"s3://b12?profile=prod", with(func(s *settings) { s.Bucket, s.Profile = "b12", "prod" })},
		{"s3://b12?role_arn=arn:aws:iam::123456789012:role/job&role_session_name=ckgate&external_id=xid", with(func(s *settings) {
			s.Bucket, s.RoleARN, s.RoleSessionName, s.ExternalID = "b12", "arn:aws:iam::123456789012:role/job", "ckgate", "xid"
		})},
		{"s3://b12?part_size=16MiB", with(func(s *settings) { s.Bucket, s.PartSize = "b12", 16<<20 })},
		{"s3://b12?part_size=5242880", with(func(s *settings) { s.Bucket, s.PartSize = "b12", 5<<20 })},
		{"s3://b12?part_size=6144KiB", with(func(s *settings) { s.Bucket, s.PartSize = "b12", 6<<20 })},
		{"s3://b12?part_size=5GiB", with(func(s *settings) { s.Bucket, s.PartSize = "b12", 5<<30 })},
		{"s3://b12?max_attempts=1", with(func(s *settings) { s.Bucket, s.MaxAttempts = "b12", 1 })},
		{"s3://b12/caf%C3%A9/x", with(func(s *settings) { s.Bucket, s.Prefix = "b12", "café/x/" })},
	}
	for _, tc := range ok {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := parseURL(mustParse(t, tc.raw))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got != tc.want {
				t.Fatalf("parse = %+v, want %+v", got, tc.want)
			}
		})
	}

	bad := []struct {
		raw, why string
		secret   string // must not appear in the error
	}{
		{"gs://bucket", "scheme", ""},
		{"s3:bucket", "s3://bucket", ""},
		{"s3:///prefix", "missing bucket", ""},
		{"s3://ab", "3 to 63", ""},
		{"s3://Bucket", "lowercase", ""},
		{"s3://bu_cket", "lowercase", ""},
		{"s3://-bucket", "begin and end", ""},
		{"s3://bucket-", "begin and end", ""},
		{"s3://b..c", "'..'", ""},
		{"s3://" + strings.Repeat("b", 64), "3 to 63", ""},
		{"s3://bucket:9000/p", "port", ""},
		{"s3://bucket/p#frag", "fragment", ""},
		{"s3://bucket/a/../b", "prefix", ""},
		{"s3://bucket/a//b", "prefix", ""},
		{"s3://bucket?nope=1", "unknown parameter", ""},
		{"s3://bucket?region=a&region=b", "2 times", ""},
		{"s3://bucket?region=", "empty", ""},
		{"s3://bucket?path_style=maybe", "path_style", ""},
		{"s3://bucket?endpoint=ftp://host", "endpoint", ""},
		{"s3://bucket?endpoint=127.0.0.1:9000", "endpoint", ""},
		{"s3://bucket?endpoint=http://host/?x=1", "endpoint", ""},
		{"s3://bucket?role_session_name=s", "need role_arn", ""},
		{"s3://bucket?external_id=x", "need role_arn", ""},
		{"s3://bucket?role_arn=job", "not an ARN", ""},
		{"s3://bucket?part_size=4MiB", "between", ""},
		{"s3://bucket?part_size=6GiB", "between", ""},
		{"s3://bucket?part_size=99999999999999999999", "positive byte count", ""},
		{"s3://bucket?part_size=8MB", "positive byte count", ""},
		{"s3://bucket?part_size=-1", "positive byte count", ""},
		{"s3://bucket?max_attempts=0", "max_attempts", ""},
		{"s3://bucket?max_attempts=21", "max_attempts", ""},
		{"s3://bucket?region=x;y", "query", ""},
		// Secrets never echo back.
		{"s3://AKIAEXAMPLE:wJalrXUtnFEMIsecret@bucket/p", "credentials in the URL", "wJalrXUtnFEMIsecret"},
		{"s3://bucket/p?secret_key=wJalrXUtnFEMIsecret", "credentials in the URL", "wJalrXUtnFEMIsecret"},
		{"s3://bucket/p?aws_access_key_id=AKIAEXAMPLE&aws_secret_access_key=wJalrXUtnFEMIsecret", "credentials in the URL", "wJalrXUtnFEMIsecret"},
		{"s3://bucket/p?session_token=FwoGZXIvYXdzEXAMPLETOKEN", "credentials in the URL", "FwoGZXIvYXdzEXAMPLETOKEN"},
		{"s3://bucket/p?endpoint=http://user:wJalrXUtnFEMIsecret@host:9000", "credentials in the URL", "wJalrXUtnFEMIsecret"},
		{"s3://bucket/p?region=us-east-1&secret_key=wJalrXUtnFEMIsecret&nope=1", "", "wJalrXUtnFEMIsecret"},
		{"s3://bucket?part_size=1&token=wJalrXUtnFEMIsecret", "", "wJalrXUtnFEMIsecret"},
	}
	for _, tc := range bad {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := parseURL(mustParse(t, tc.raw))
			if err == nil {
				t.Fatal("parse: no error")
			}
			if !errors.Is(err, gateway.ErrInvalidURL) {
				t.Errorf("error %q is not ErrInvalidURL", err)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q does not say %q", err, tc.why)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

// isolateAWS points the SDK's configuration at nothing the machine has.
func isolateAWS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
	} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return dir
}

// TestOpen opens the emulator through a URL, with credentials from the
// environment, and checks that the prefix is applied inside the backend.
func TestOpen(t *testing.T) {
	raw := newStore(t)
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", emu.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", emu.SecretKey)
	u := mustParse(t, "s3://"+raw.d.bucket+"/team/q1?endpoint="+url.QueryEscape(emu.Endpoint)+"&path_style=true&max_attempts=2&part_size=5MiB")
	st, err := Open(t.Context(), u)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer gateway.Close(st)
	s := st.(*Store)
	if s.d.partSize != 5<<20 || s.d.client.Options().Region != "us-east-1" || s.d.client.Options().RetryMaxAttempts != 2 {
		t.Errorf("store: part size %d, region %q, max attempts %d", s.d.partSize, s.d.client.Options().Region, s.d.client.Options().RetryMaxAttempts)
	}
	if err := gateway.MakeBucket(t.Context(), st); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	v, err := st.Put(t.Context(), "metadata", []byte(`{"id":"q1"}`), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	wantStored(t, raw, "team/q1/metadata", []byte(`{"id":"q1"}`), v)
	_, err = st.Stat(t.Context(), "missing")
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Key != "missing" || !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat missing = %v, want not found naming the caller's key", err)
	}
	got := listVersions(t, st, "")
	if len(got) != 1 || got["metadata"] != v {
		t.Fatalf("list = %v, want only metadata at %q", got, v)
	}
}

// TestOpenProfileAndRole: a named profile supplies region and credentials;
// role_arn wraps them in an STS assume-role provider. Open sends nothing.
func TestOpenProfileAndRole(t *testing.T) {
	dir := isolateAWS(t)
	config := "[profile ckgate-test]\nregion = eu-west-3\n"
	creds := "[ckgate-test]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n"
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "credentials"), []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(t.Context(), mustParse(t, "s3://bucket/p?profile=ckgate-test"))
	if err != nil {
		t.Fatalf("open with a profile: %v", err)
	}
	o := st.(*Store).d.client.Options()
	if o.Region != "eu-west-3" {
		t.Errorf("region %q, want the profile's eu-west-3", o.Region)
	}
	c, err := o.Credentials.Retrieve(t.Context())
	if err != nil || c.AccessKeyID != "AKIDPROFILE" {
		t.Errorf("credentials %q, %v; want the profile's", c.AccessKeyID, err)
	}

	st, err = Open(t.Context(), mustParse(t, "s3://bucket/p?profile=ckgate-test&region=us-west-2&role_arn=arn:aws:iam::123456789012:role/job&external_id=x"))
	if err != nil {
		t.Fatalf("open with a role: %v", err)
	}
	o = st.(*Store).d.client.Options()
	if o.Region != "us-west-2" {
		t.Errorf("region %q, want the URL's us-west-2", o.Region)
	}
	if !aws.IsCredentialsProvider(o.Credentials, (*stscreds.AssumeRoleProvider)(nil)) {
		t.Errorf("credentials %T do not assume the role", o.Credentials)
	}

	if _, err := Open(t.Context(), mustParse(t, "s3://bucket/p?profile=no-such-profile")); err == nil {
		t.Error("open with a missing profile: no error")
	}
	_, err = Open(t.Context(), mustParse(t, "s3://bucket/p"))
	if !errors.Is(err, gateway.ErrInvalidURL) || !strings.Contains(err.Error(), "no region") {
		t.Errorf("open without a region: %v, want a bad URL error about the region", err)
	}
}

var secretValue = regexp.MustCompile(`^[A-Za-z0-9]{8,}$`)

func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"s3://bucket",
		"s3://bucket/prefix/nested?region=eu-west-1",
		"s3://bucket?endpoint=http://127.0.0.1:7070&path_style=true",
		"s3://bucket?role_arn=arn:aws:iam::1:role/r&role_session_name=s&external_id=e",
		"s3://bucket?part_size=8MiB&max_attempts=5&profile=p",
		"s3://AKIA:SECRETSECRET@bucket/p",
		"s3://bucket?secret_key=SECRETSECRET",
		"s3://bucket?endpoint=http://u:SECRETSECRET@h",
		"s3://bucket/a/../b",
		"s3://bucket:1/%zz",
		"s3:opaque",
		"s3://bucket?region=a&region=b",
		"s3://bucket/p#SECRETSECRET",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		s, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, gateway.ErrInvalidURL) {
				t.Fatalf("error %q is not ErrInvalidURL", err)
			}
			// Values of secret-looking parameters and passwords never show.
			var secrets []string
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p)
			}
			if q, qerr := url.ParseQuery(u.RawQuery); qerr == nil {
				for name, vals := range q {
					if secretLooking(name) {
						secrets = append(secrets, vals...)
					}
				}
			}
			for _, sec := range secrets {
				if secretValue.MatchString(sec) && strings.Count(raw, sec) == 1 && strings.Contains(err.Error(), sec) {
					t.Fatalf("error %q shows the secret %q", err, sec)
				}
			}
			return
		}
		if bucketProblem(s.Bucket) != "" {
			t.Fatalf("accepted bucket %q", s.Bucket)
		}
		if s.Prefix != "" {
			if !strings.HasSuffix(s.Prefix, "/") || gateway.ValidateKey("put", strings.TrimSuffix(s.Prefix, "/")) != nil {
				t.Fatalf("accepted prefix %q", s.Prefix)
			}
		}
		if s.PartSize < MinPartSize || s.PartSize > MaxPartSize {
			t.Fatalf("accepted part size %d", s.PartSize)
		}
		if u.User != nil {
			t.Fatalf("accepted user information in %q", raw)
		}
	})
}
