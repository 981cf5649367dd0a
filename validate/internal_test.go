package validate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
)

func TestRedactor(t *testing.T) {
	r := &redactor{}
	r.add("?sv=2024&sp=rl&sig=SECRETSIGNATURE%2B%3D", "AccountKey=abc;", "short")
	r.addID("AKIAIOSFODNN7EXAMPLE")
	r.addID("CKGATEAKIDABCDEFGHIJ")
	for _, tc := range []struct{ in, want string }{
		{"token sv=2024&sp=rl&sig=SECRETSIGNATURE%2B%3D here", "token REDACTED here"},
		{"GET http://h/c?sp=r&sig=OTHERSIG&se=x", "GET http://h/c?sp=REDACTED&sig=REDACTED&se=REDACTED"},
		{"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=KEYKEYKEY==;", "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=REDACTED;"},
		{"a short word stays", "a short word stays"},
		{"X-Amz-Signature=abcdef&X-Amz-Security-Token=tok", "X-Amz-Signature=REDACTED&X-Amz-Security-Token=REDACTED"},
		{"https://h/hook?code=FUNCKEY&x=1#access_token=TOK", "https://h/hook?code=REDACTED&x=REDACTED#REDACTED"},
		{"the store sees CKGATEAKIDABCDEFGHIJ, not the expected CKGATEAKIDABCDEFGHIJ", "the store sees ****GHIJ, not the expected ****GHIJ"},
		{"access key AKIAIOSFODNN7EXAMPLE", "access key ****MPLE"},
	} {
		if got := r.clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheckPrincipal(t *testing.T) {
	id := identity{principal: "arn:aws:sts::123456789012:assumed-role/ckpt-job/session-1",
		aliases: []string{"123456789012", roleOfAssumedRole("arn:aws:sts::123456789012:assumed-role/ckpt-job/session-1")},
		outcome: passf("found")}
	for expect, status := range map[string]Status{
		"": Pass,
		"arn:aws:iam::123456789012:role/ckpt-job": Pass,
		"123456789012":                            Pass,
		"arn:aws:iam::123456789012:role/other":    Fail,
		"ARN:AWS:IAM::123456789012:ROLE/CKPT-JOB": Fail,
	} {
		if got := checkPrincipal(id, expect); got.status != status {
			t.Errorf("expect %q: %s (%s), want %s", expect, got.status, got.message, status)
		}
	}
	email := identity{principal: "Job@Proj.iam.gserviceaccount.com", outcome: passf("x")}
	if got := checkPrincipal(email, "job@proj.iam.gserviceaccount.com"); got.status != Pass {
		t.Errorf("emails are case-insensitive: %s", got.message)
	}
	unknown := identity{principal: "AKIAEXAMPLE", aliases: []string{"AKIAEXAMPLE"}, outcome: outcome{status: Unknown, message: "no STS"}}
	if got := checkPrincipal(unknown, "AKIAEXAMPLE"); got.status != Unknown || !strings.Contains(got.message, "matches") {
		t.Errorf("an unknown identity matching by access key: %+v", got)
	}
	if got := checkPrincipal(identity{outcome: outcome{status: Unknown}}, "someone"); got.status != Fail {
		t.Errorf("an expected principal that cannot be confirmed must fail: %+v", got)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	err := os.WriteFile(filepath.Join(dir, "a", "b"), nil, 0o644)
	if info := inspect(gateway.E("put", "a/b", gateway.ErrNotFound, err)); info.code != "ENOENT" || info.kind != "not_found" {
		t.Errorf("ENOENT: %+v", info)
	}
	if info := inspect(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)); info.code != "ECONNREFUSED" {
		t.Errorf("ECONNREFUSED: %+v", info)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if info := inspect(ctx.Err()); info.code != "TIMEOUT" {
		t.Errorf("deadline: %+v", info)
	}
}

func TestClockSkew(t *testing.T) {
	for _, tc := range []struct {
		offset time.Duration
		status Status
		says   string
	}{
		{0, Pass, "within 1s"},
		{30 * time.Second, Pass, "behind"},
		{-30 * time.Second, Pass, "ahead"},
		{10 * time.Minute, Fail, "behind"},
		{-20 * time.Minute, Fail, "ahead"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", time.Now().Add(tc.offset).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusForbidden)
		}))
		u, _ := url.Parse(srv.URL)
		got := clockSkew(context.Background(), u, 5*time.Minute)
		srv.Close()
		if got.status != tc.status || !strings.Contains(got.message, tc.says) {
			t.Errorf("offset %s: %s %q, want %s %q", tc.offset, got.status, got.message, tc.status, tc.says)
		}
		if tc.status == Fail && got.code != "CLOCK_SKEW" {
			t.Errorf("offset %s: code %q", tc.offset, got.code)
		}
	}
}

func TestDescribeSAS(t *testing.T) {
	a := &azTarget{}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if o := a.describeSAS("SAS", "sv=2024&sp=rl&se="+url.QueryEscape(past)+"&sig=abc"); o.status != Fail || o.code != "SASExpired" {
		t.Errorf("expired SAS: %+v", o)
	}
	if o := a.describeSAS("SAS", "sv=2024&sp=rl&st="+url.QueryEscape(future)+"&sig=abc"); o.status != Fail || o.code != "SASNotYetValid" {
		t.Errorf("future SAS: %+v", o)
	}
	o := a.describeSAS("SAS", "?sv=2024&sp=racwdl&sr=c&se="+url.QueryEscape(future)+"&sig=abc")
	if o.status != Pass || !strings.Contains(o.message, "permissions racwdl") || strings.Contains(o.message, "abc") {
		t.Errorf("valid SAS: %+v", o)
	}
}

func TestClaims(t *testing.T) {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"oid":"11111111-2222-3333-4444-555555555555","appid":"app","tid":"t"}`))
	c, err := claims("h." + payload + ".s")
	if err != nil || c.OID != "11111111-2222-3333-4444-555555555555" || c.AppID != "app" {
		t.Errorf("claims = %+v, %v", c, err)
	}
	if _, err := claims("not-a-jwt"); err == nil {
		t.Error("claims of a non-JWT succeeded")
	}
}

func TestRoleOfAssumedRole(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:sts::123456789012:assumed-role/job/s":    "arn:aws:iam::123456789012:role/job",
		"arn:aws-cn:sts::123456789012:assumed-role/job/s": "arn:aws-cn:iam::123456789012:role/job",
		"arn:aws:iam::123456789012:user/alice":            "",
		"arn:aws:sts::123456789012:federated-user/alice":  "",
		"not an arn": "",
	} {
		if got := roleOfAssumedRole(in); got != want {
			t.Errorf("roleOfAssumedRole(%q) = %q, want %q", in, got, want)
		}
	}
}

func sampleReport() *Report {
	r := &Report{URL: "s3://b/ck", Principal: "arn:aws:iam::1:user/u", ProbeKey: PreflightPrefix + "x", Results: []Result{
		{Layer: LayerCredentials, Operation: OpResolve, Result: Pass, Message: "env", DurationMS: 0.1},
		{Layer: LayerIdentity, Operation: OpWhoAmI, Result: Unknown, Code: "MethodNotAllowed", Message: "no STS <here> & there"},
		{Layer: LayerAuthorization, Operation: OpPut, Result: Fail, Code: "AccessDenied", Kind: "permission", Message: "put: denied", RequestID: "R1", DurationMS: 12},
		{Layer: LayerAuthorization, Operation: OpGet, Result: Skip, Message: "skipped: authorization/put failed"},
	}}
	r.finish(20 * time.Millisecond)
	return r
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc output.JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	s := doc.Suites[0]
	if doc.Tests != 4 || doc.Failures != 1 || doc.Skipped != 2 || len(s.Cases) != 4 {
		t.Fatalf("counts tests=%d failures=%d skipped=%d cases=%d:\n%s", doc.Tests, doc.Failures, doc.Skipped, len(s.Cases), b.String())
	}
	put := s.Cases[2]
	if put.Classname != "validate-access.authorization" || put.Name != "put" || put.Failure == nil ||
		put.Failure.Type != "AccessDenied" || !strings.Contains(put.Failure.Text, "request id R1") {
		t.Errorf("put case: %+v", put)
	}
	if who := s.Cases[1]; who.Skipped == nil || !strings.HasPrefix(who.Skipped.Message, "unknown: MethodNotAllowed") {
		t.Errorf("unknown case: %+v", who)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"Principal: arn:aws:iam::1:user/u", "authorization  put", "FAIL", "AccessDenied", "[request id R1]",
		"FAILED: 1 of 4 probes failed, first: authorization/put (AccessDenied)"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	if err := WriteReport(&b, sampleReport(), "yaml"); err == nil {
		t.Error("WriteReport accepted format yaml")
	}
}

// TestWarningsInEveryFormat: a report's warnings show in the table (one
// "Warning:" line each), in JSON ("warnings") and in JUnit (a property).
func TestWarningsInEveryFormat(t *testing.T) {
	r := sampleReport()
	r.Warnings = []string{RootWarning}
	for _, format := range []string{"table", "json", "junit"} {
		var b bytes.Buffer
		if err := WriteReport(&b, r, format); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"table": "Warning:   running as root", "json": `"warnings": [`, "junit": `name="warning"`}[format]
		if out := b.String(); !strings.Contains(out, want) || !strings.Contains(out, "--as-user") {
			t.Errorf("%s output lacks the warning (%q):\n%s", format, want, out)
		}
	}
}
