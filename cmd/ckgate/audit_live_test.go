package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/gcsstore"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/internal/emulator"
)

// `ckgate audit` reading the lifecycle configuration live from the store
// (no --lifecycle file), against the real emulators. Neither keeps a
// lifecycle configuration (versitygw v1.8.0 answers 501 NotImplemented,
// fake-gcs-server v1.56.1 drops it): audited as they are, the configuration
// is unknown (CKG-A008) and the audit fails. What the clouds answer where
// the emulators cannot is injected by a proxy in front of the emulator,
// which serves everything else.

// auditReport is the part of `ckgate audit --format json` the tests read.
type auditReport struct {
	Checkpoints []struct{ URL string } `json:"checkpoints"`
	Findings    []struct {
		ID, Severity, Resource, Msg string
	} `json:"findings"`
}

// auditJSON runs `ckgate audit --format json url` and decodes the report.
func auditJSON(t *testing.T, u string) (auditReport, result) {
	t.Helper()
	r := ckgate(t, Options{}, "", "audit", "--format", "json", u)
	var rep auditReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("audit json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	return rep, r
}

// wantOnly checks that the report has the one checkpoint cp and that,
// warnings aside (versioning off on versitygw), its findings are exactly
// one of rule id (severity sev) whose message says every one of says. It
// returns that finding's resource.
func (rep auditReport) wantOnly(t *testing.T, r result, cp, id, sev string, says ...string) string {
	t.Helper()
	if len(rep.Checkpoints) != 1 || rep.Checkpoints[0].URL != cp {
		t.Fatalf("checkpoints %+v, want %s", rep.Checkpoints, cp)
	}
	var got []int
	for i, f := range rep.Findings {
		if f.Severity != "warn" {
			got = append(got, i)
		}
	}
	if len(got) != 1 || rep.Findings[got[0]].ID != id || rep.Findings[got[0]].Severity != sev {
		t.Fatalf("findings %+v, want one %s (%s)\nstderr:\n%s", rep.Findings, id, sev, r.stderr)
	}
	f := rep.Findings[got[0]]
	for _, s := range says {
		if !strings.Contains(f.Msg, s) {
			t.Errorf("%s says %q, not %q", id, f.Msg, s)
		}
	}
	return f.Resource
}

// writeCheckpoint creates the checkpoint of query "q" under the store's
// prefix.
func writeCheckpoint(t *testing.T, s gateway.Store) {
	t.Helper()
	if err := gateway.MakeBucket(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"metadata": `{"id":"q"}`, "offsets/0": "v1\n{}\n{\"logOffset\":0}"} {
		if _, err := s.Put(t.Context(), k, []byte(v), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
}

func s3Client(emu *emulator.S3Emulator, endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region: emu.Region, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(emu.AccessKey, emu.SecretKey, ""),
	})
}

// expireCheckpoints is the lifecycle rule of the tests: the checkpoint's
// prefix expires after 7 days.
var expireCheckpoints = types.LifecycleRule{
	ID: aws.String("expire-checkpoints"), Status: types.ExpirationStatusEnabled,
	Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("team/q1/")},
	Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)},
}

// TestAuditLiveS3Emulator: versitygw refuses to store the rule and to read
// any (501 NotImplemented): the audit reports the configuration unknown
// and fails, naming the bucket and the call.
func TestAuditLiveS3Emulator(t *testing.T) {
	emu := emulator.Versitygw(t)
	bucket := bucketName()
	c := s3Client(emu, emu.Endpoint)
	writeCheckpoint(t, s3store.New(c, bucket, "team/q1"))
	_, err := c.PutBucketLifecycleConfiguration(t.Context(), &s3.PutBucketLifecycleConfigurationInput{
		Bucket:                 aws.String(bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{expireCheckpoints}},
	})
	if err == nil || !strings.Contains(err.Error(), "NotImplemented") {
		t.Fatalf("put lifecycle on versitygw: %v; if it keeps lifecycle rules now, expect CKG-A001 here", err)
	}

	u := s3URL(emu, bucket, emu.Endpoint)
	rep, r := auditJSON(t, u)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (an unknown fails the audit)\nstderr:\n%s", r.code, r.stderr)
	}
	res := rep.wantOnly(t, r, "s3://"+bucket+"/team/q1", "CKG-A008", "unknown",
		strconv.Quote(bucket), "GetBucketLifecycleConfiguration", "NotImplemented")
	if res != bucket {
		t.Errorf("CKG-A008 on %q, want the bucket %q", res, bucket)
	}
	ckgate(t, Options{}, "", "audit", u).wantErr(t, 1, "audit findings", "1 unknown")
}

// s3Proxy serves the S3 API of emu, except GET ?lifecycle, which lifecycle
// answers as S3 does. Requests keep their Host, so signatures hold.
func s3Proxy(t *testing.T, emu *emulator.S3Emulator, lifecycle http.HandlerFunc) string {
	t.Helper()
	target, err := url.Parse(emu.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Has("lifecycle") {
			w.Header().Set("Content-Type", "application/xml")
			lifecycle(w, r)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func s3Error(status int, code string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>answered by the test</Message></Error>`)
	}
}

// TestAuditLiveS3 reads what S3 answers GetBucketLifecycleConfiguration:
// the rule (CKG-A001), no configuration (readable, no rules: clean) or a
// refusal (unknown).
func TestAuditLiveS3(t *testing.T) {
	emu := emulator.Versitygw(t)
	for _, tc := range []struct {
		name      string
		lifecycle http.HandlerFunc
		code      int
		id, sev   string // the one finding; "" none
		says      []string
	}{
		{
			name: "rule",
			lifecycle: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
					`<Rule><ID>expire-checkpoints</ID><Filter><Prefix>team/q1/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days></Expiration></Rule>`+
					`</LifecycleConfiguration>`)
			},
			code: 1, id: "CKG-A001", sev: "deny", says: []string{"expire-checkpoints", "7 days"},
		},
		{name: "none", lifecycle: s3Error(http.StatusNotFound, "NoSuchLifecycleConfiguration"), code: 0},
		{
			name: "refused", lifecycle: s3Error(http.StatusForbidden, "AccessDenied"),
			code: 1, id: "CKG-A008", sev: "unknown", says: []string{"GetBucketLifecycleConfiguration", "permission denied", "AccessDenied"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := s3Proxy(t, emu, tc.lifecycle)
			bucket := bucketName()
			writeCheckpoint(t, s3store.New(s3Client(emu, proxy), bucket, "team/q1"))
			rep, r := auditJSON(t, s3URL(emu, bucket, proxy))
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			cp := "s3://" + bucket + "/team/q1"
			if tc.id == "" {
				for _, f := range rep.Findings {
					if f.Severity != "warn" {
						t.Errorf("finding %+v on a bucket without lifecycle rules", f)
					}
				}
				if len(rep.Checkpoints) != 1 || rep.Checkpoints[0].URL != cp {
					t.Errorf("checkpoints %+v, want %s", rep.Checkpoints, cp)
				}
				return
			}
			rep.wantOnly(t, r, cp, tc.id, tc.sev, tc.says...)
		})
	}
}

// gcsClient returns a client of host (the emulator or a proxy of it), set
// as STORAGE_EMULATOR_HOST for the CLI too.
func gcsClient(t *testing.T, host string) *storage.Client {
	t.Helper()
	t.Setenv(gcsstore.EmulatorHostEnv, host)
	c, err := storage.NewClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAuditLiveGCSEmulator: fake-gcs-server accepts the rule and drops it;
// its answer without rules is no evidence, so the audit reports the
// configuration unknown and fails.
func TestAuditLiveGCSEmulator(t *testing.T) {
	emu := emulator.FakeGCS(t)
	c := gcsClient(t, emu.Host)
	bucket := bucketName()
	writeCheckpoint(t, gcsstore.New(c, bucket, "team/q1", gcsstore.WithProject("ckgate-test")))
	a, err := c.Bucket(bucket).Update(t.Context(), storage.BucketAttrsToUpdate{Lifecycle: &storage.Lifecycle{Rules: []storage.LifecycleRule{{
		Action:    storage.LifecycleAction{Type: storage.DeleteAction},
		Condition: storage.LifecycleCondition{AgeInDays: 7, MatchesPrefix: []string{"team/q1/"}},
	}}}})
	if err != nil || len(a.Lifecycle.Rules) != 0 {
		t.Fatalf("lifecycle update on fake-gcs-server: %+v, %v; if it keeps lifecycle rules now, expect CKG-A001 here", a, err)
	}

	rep, r := auditJSON(t, "gs://"+bucket)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (an unknown fails the audit)\nstderr:\n%s", r.code, r.stderr)
	}
	rep.wantOnly(t, r, "gs://"+bucket+"/team/q1", "CKG-A008", "unknown", strconv.Quote(bucket), "buckets.get", gcsstore.EmulatorHostEnv)
}

// TestAuditLiveGCS reads the rule as Cloud Storage reports it in the
// bucket resource (added by a proxy to the emulator's answer): CKG-A001.
func TestAuditLiveGCS(t *testing.T) {
	emu := emulator.FakeGCS(t)
	target, err := url.Parse("http://" + emu.Host)
	if err != nil {
		t.Fatal(err)
	}
	rule := map[string]any{"rule": []any{map[string]any{
		"action": map[string]any{"type": "Delete"}, "condition": map[string]any{"age": 7, "matchesPrefix": []string{"team/q1/"}},
	}}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(resp *http.Response) error {
			req := resp.Request
			if req.Method != http.MethodGet || !strings.HasPrefix(req.URL.Path, "/storage/v1/b/") ||
				strings.Contains(strings.TrimPrefix(req.URL.Path, "/storage/v1/b/"), "/") || resp.StatusCode != http.StatusOK {
				return nil
			}
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				return err
			}
			resp.Body.Close()
			m["lifecycle"] = rule
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		},
	}
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	host := strings.TrimPrefix(proxy.URL, "http://")

	c := gcsClient(t, host)
	bucket := bucketName()
	writeCheckpoint(t, gcsstore.New(c, bucket, "team/q1", gcsstore.WithProject("ckgate-test")))
	// Versioning on (fake-gcs-server keeps it): no warning beside the rule.
	if _, err := c.Bucket(bucket).Update(t.Context(), storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
		t.Fatal(err)
	}
	rep, r := auditJSON(t, "gs://"+bucket)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep.wantOnly(t, r, "gs://"+bucket+"/team/q1", "CKG-A001", "deny", "#1 Delete", "7 days")
}
