package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditDir lays out a local "bucket" with two checkpoints: team/q1 and a
// second query's checkpoint nested inside it.
func auditDir(t *testing.T, nested bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"team/q1/metadata":  `{"id":"q1"}`,
		"team/q1/offsets/0": "v1\n{}\n",
		"team/q1/commits/0": "v1\n{}\n",
	}
	if nested {
		files["team/q1/inner/metadata"] = `{"id":"q2"}`
		files["team/q1/inner/offsets/0"] = "v1\n{}\n"
	}
	for k, v := range files {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const lifecycleDir = "../../testdata/lifecycle/"

func TestAuditClean(t *testing.T) {
	dir := auditDir(t, false)
	ckgate(t, Options{}, "", "audit", dir).want(t, 0, "1 checkpoint, 0 deny, 0 warn, 0 unknown")
	// warnings pass unless --fail-on-warn
	ckgate(t, Options{}, "", "audit", "--lifecycle", lifecycleDir+"s3/versioning-suspended.json", dir).want(t, 0, "CKG-A007")
	ckgate(t, Options{}, "", "audit", "--fail-on-warn", "--lifecycle", lifecycleDir+"s3/versioning-suspended.json", dir).wantErr(t, 1, "audit findings")
}

func TestAuditFindings(t *testing.T) {
	dir := auditDir(t, true)
	r := ckgate(t, Options{}, "", "audit", "--lifecycle", lifecycleDir+"s3/whole-bucket.json", dir)
	r.wantErr(t, 1, "audit findings")
	for _, s := range []string{"CKG-A001", "CKG-A005", "expire-everything-after-30-days", "30 days", "team/q1/inner"} {
		if !strings.Contains(r.stdout, s) {
			t.Fatalf("table lacks %q:\n%s", s, r.stdout)
		}
	}
	// the outage window
	ckgate(t, Options{}, "", "audit", "--outage-window", "840h", "--lifecycle", lifecycleDir+"s3/whole-bucket.json", dir).wantErr(t, 1)
	r = ckgate(t, Options{}, "", "audit", "--outage-window", "840h", "--format", "json", "--lifecycle", lifecycleDir+"s3/whole-bucket.json", auditDir(t, false))
	if !strings.Contains(r.stdout, "CKG-A003") || r.code != 1 {
		t.Fatalf("a 35-day outage window against a 30-day expiration: exit %d\n%s", r.code, r.stdout)
	}
	// unreadable rules are unknown, never a pass
	ckgate(t, Options{}, "", "audit", "--lifecycle", lifecycleDir+"s3/unreadable.json", auditDir(t, false)).wantErr(t, 1)
}

func TestAuditBucketScopedLifecycle(t *testing.T) {
	dir := auditDir(t, false)
	// a local directory has no bucket name: a bucket-scoped configuration still applies to it
	ckgate(t, Options{}, "", "audit", "--lifecycle", "elsewhere="+lifecycleDir+"s3/whole-bucket.json", dir).wantErr(t, 1, "audit findings")
}

func TestAuditFormats(t *testing.T) {
	dir := auditDir(t, true)
	lc := lifecycleDir + "azure/management-policy-arm.json"
	r := ckgate(t, Options{}, "", "audit", "--format", "json", "--lifecycle", lc, dir)
	var rep struct {
		Checkpoints []struct{ URL string } `json:"checkpoints"`
		Findings    []struct{ ID, Severity string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Checkpoints) != 2 || len(rep.Findings) == 0 {
		t.Fatalf("json %q: %v", r.stdout, err)
	}
	r = ckgate(t, Options{}, "", "audit", "--format", "junit", "--lifecycle", lc, dir)
	var suite struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &suite); err != nil || suite.Failures != 1 || r.code != 1 {
		t.Fatalf("junit (exit %d) %q: %v", r.code, r.stdout, err)
	}
	r = ckgate(t, Options{}, "", "audit", "--format", "sarif", dir)
	var sarif struct{ Version string }
	if err := json.Unmarshal([]byte(r.stdout), &sarif); err != nil || sarif.Version != "2.1.0" {
		t.Fatalf("sarif %q: %v", r.stdout, err)
	}
}

func TestAuditCouldNotAudit(t *testing.T) {
	dir := auditDir(t, false)
	ckgate(t, Options{}, "", "audit", filepath.Join(dir, "missing")).wantErr(t, 2, "could not audit")
	ckgate(t, Options{}, "", "audit", "--lifecycle", "/nonexistent.json", dir).wantErr(t, 2, "nonexistent.json")
	bad := writeFile(t, `{"Neither": "S3 nor GCS nor Azure"}`)
	ckgate(t, Options{}, "", "audit", "--lifecycle", bad, dir).wantErr(t, 2, "not a lifecycle")
	ckgate(t, Options{}, "", "audit", "--format", "xml", dir).wantErr(t, 2, "--format")
	ckgate(t, Options{}, "", "audit", "--outage-window", "-1h", dir).wantErr(t, 2, "outage-window")
	ckgate(t, Options{}, "", "audit").wantErr(t, 2)
}
