package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/lifecycle")

// TestLifecycleGolden normalises every fixture in testdata/lifecycle and
// compares the model with its .golden file.
func TestLifecycleGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/lifecycle/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.json") {
			continue
		}
		n++
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := policy.ParseLifecycle(filepath.Base(f), data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(b, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(f, ".json") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from %s:\n%s", f, golden, got)
			}
		})
	}
	if n < 10 {
		t.Fatalf("%d fixtures, want the S3, GCS and Azure set", n)
	}
}

func parseFixture(t *testing.T, name string) policy.Bucket {
	t.Helper()
	data, err := os.ReadFile("../testdata/lifecycle/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.ParseLifecycle(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rule(t *testing.T, b policy.Bucket, id string) policy.LifecycleRule {
	t.Helper()
	for _, r := range b.Rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("%s: no rule %q", b.Source, id)
	return policy.LifecycleRule{}
}

func TestS3Lifecycle(t *testing.T) {
	b := parseFixture(t, "s3/whole-bucket.json")
	all := rule(t, b, "expire-everything-after-30-days")
	if !all.Enabled || len(all.Scope.Prefixes) != 0 || len(all.Actions) != 1 || all.Actions[0] != (policy.Action{Kind: "expire", AgeDays: 30, Basis: "created"}) {
		t.Fatalf("empty filter: %+v", all)
	}
	if off := rule(t, b, "old-scratch-cleanup"); off.Enabled || len(off.Scope.Prefixes) != 0 {
		t.Fatalf("disabled rule with an empty prefix: %+v", off)
	}
	m := parseFixture(t, "s3/mixed.json")
	if r := rule(t, m, "tagged-scratch"); r.Scope.Tags["lifecycle"] != "scratch" {
		t.Fatalf("tag filter: %+v", r)
	}
	g := rule(t, m, "streaming-to-glacier")
	kinds := []string{}
	for _, a := range g.Actions {
		kinds = append(kinds, a.Kind)
	}
	if strings.Join(kinds, ",") != "cold,archive,noncurrent_expire,abort_multipart" || g.Scope.Prefixes[0] != "streaming/" || *g.Scope.MinSize != 0 {
		t.Fatalf("And filter and actions: %+v", g)
	}
	if r := rule(t, m, "legacy-tmp"); r.Scope.Prefixes[0] != "tmp/" || r.Actions[0].Date == "" {
		t.Fatalf("legacy prefix and date: %+v", r)
	}
	if r := rule(t, m, "delete-markers"); r.Actions[0].Kind != "delete_marker" {
		t.Fatalf("delete markers: %+v", r)
	}
	u := parseFixture(t, "s3/unreadable.json")
	for _, id := range []string{"future-filter", "unknown-storage-class", "paused"} {
		if r := rule(t, u, id); r.Unreadable == "" {
			t.Errorf("rule %s read as %+v, want unreadable", id, r)
		}
	}
	if v := parseFixture(t, "s3/versioning-suspended.json"); v.Versioning != "suspended" {
		t.Fatalf("versioning %q", v.Versioning)
	}
	if l := parseFixture(t, "s3/object-lock.json"); l.ObjectLock == nil || l.ObjectLock.Days != 30 || l.ObjectLock.Mode != "GOVERNANCE" {
		t.Fatalf("object lock %+v", l.ObjectLock)
	}
}

func TestGCSLifecycle(t *testing.T) {
	b := parseFixture(t, "gcs/bucket.json")
	if b.Bucket != "acme-streaming" || b.Versioning != "off" || b.SoftDeleteDays == nil || *b.SoftDeleteDays != 7 || len(b.Rules) != 2 {
		t.Fatalf("bucket resource: %+v", b)
	}
	lc := parseFixture(t, "gcs/lifecycle.json")
	want := []string{"expire", "cold", "noncurrent_expire", "expire", "abort_multipart"}
	for i, r := range lc.Rules {
		if r.Actions[0].Kind != want[i] || r.Unreadable != "" {
			t.Errorf("rule %d: %+v, want %s", i, r, want[i])
		}
	}
	if r := lc.Rules[3]; len(r.Scope.Requires) != 1 {
		t.Errorf("daysSinceCustomTime: %+v", r)
	}
	d := parseFixture(t, "gcs/gcloud-describe.json")
	if d.Bucket != "acme-scratch" || d.Versioning != "off" || *d.SoftDeleteDays != 0 || d.ObjectLock == nil || d.ObjectLock.Days != 1 ||
		d.Rules[0].Actions[0].Date != "2024-01-01" {
		t.Fatalf("gcloud describe: %+v", d)
	}
}

func TestAzureLifecycle(t *testing.T) {
	b := parseFixture(t, "azure/management-policy.json")
	r := rule(t, b, "age-out-streaming")
	if !r.Scope.ContainerInPrefix || r.Scope.Prefixes[0] != "checkpoints/streaming" || len(r.Actions) != 4 {
		t.Fatalf("management policy rule: %+v", r)
	}
	if off := rule(t, b, "disabled-whole-account"); off.Enabled {
		t.Fatalf("disabled rule read as enabled")
	}
	if tag := rule(t, b, "scratch-by-tag"); len(tag.Scope.Tags) != 1 {
		t.Fatalf("blob index filter: %+v", tag)
	}
	arm := parseFixture(t, "azure/management-policy-arm.json")
	if len(arm.Rules) != 1 || arm.Rules[0].Actions[0].Kind != "cold" || arm.Rules[0].Actions[0].AgeDays != 60 {
		t.Fatalf("ARM shape: %+v", arm)
	}
	p := parseFixture(t, "azure/blob-service-properties.json")
	if p.Bucket != "" || p.Versioning != "off" || *p.SoftDeleteDays != 0 {
		t.Fatalf("blob service properties: %+v", p)
	}
}

func TestParseLifecycleRefuses(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `{}`, `{"Something": 1}`, `{"Rules": 5}`, `{"rule": [1]} x`, `{"Status": "Maybe"}`} {
		if b, err := policy.ParseLifecycle("in", []byte(in)); err == nil {
			// A rule list of the wrong type is an error; a rule of the wrong
			// type is an unreadable rule.
			if len(b.Rules) == 0 || b.Rules[0].Unreadable == "" {
				t.Errorf("ParseLifecycle(%q) = %+v, want an error", in, b)
			}
		}
	}
}

// FuzzParseLifecycle: any input either errors or yields a model whose
// rules are all either readable with actions, or unreadable with a reason,
// and which survives JSON.
func FuzzParseLifecycle(f *testing.F) {
	files, _ := filepath.Glob("../testdata/lifecycle/*/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil && !strings.HasSuffix(file, ".golden.json") {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"Rules":[{"Status":"Enabled","Filter":{"And":{"Tags":[{"Key":"a"}]}},"Expiration":{"Days":-1}}]}`))
	f.Add([]byte(`{"rules":[{"definition":{"actions":{"baseBlob":{"delete":{}}}}}]}`))
	f.Add([]byte(`{"rule":[{"action":{"type":"SetStorageClass"},"condition":{"age":1.5}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := policy.ParseLifecycle("fuzz", data)
		if err != nil {
			return
		}
		for _, r := range b.Rules {
			if r.Unreadable == "" && len(r.Actions) == 0 && b.Provider != "azure" {
				t.Fatalf("readable rule without actions: %+v", r)
			}
			for _, a := range r.Actions {
				if a.AgeDays < 0 {
					t.Fatalf("negative age: %+v", r)
				}
			}
		}
		if _, err := json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseInput: a parsed input always has a valid action and a root, and
// the engine answers it without panicking, refusing by a named rule.
func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"action":"delete","key":"offsets/3","root":"s3://b/q1","principal":{"id":"cron","kind":"housekeeping"}}`))
	f.Add([]byte(`{"action":"put","key":"commits/0","cond":"if-match","root":"s3://b/q1/","principal":{"id":"svc","kind":"job"},"checkpoint":{"query_id":"q1","latest_batch":4}}`))
	f.Add([]byte(`{"action":"open","root":"s3://b/q1","principal":{"id":"svc","kind":"job"},"checkpoint":{"query_id":"q2","metadata_query_id":"q1"},"known_queries":[{"query_id":"q3","root":"s3://b"}]}`))
	f.Add([]byte(`{"action":"delete","key":"offsets/1","root":"r","principal":{"kind":"retention"},"plan":{"obsolete":{"offsets/1":"old"}}}`))
	f.Add([]byte(`{"action":"delete","key":"x","root":"r","principal":{"kind":"admin","reason":"INC-1"}}`))
	e := engine(f, policy.Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := policy.ParseInput(data)
		if err != nil {
			return
		}
		if in.Root == "" || (in.Action != "put" && in.Action != "delete" && in.Action != "open") {
			t.Fatalf("accepted %+v", in)
		}
		d := e.Decide(context.Background(), in)
		if !d.Allow && len(d.Deny) == 0 {
			t.Fatalf("a denial without a rule: %+v", d)
		}
		if d.Allow && len(d.Deny) > 0 {
			t.Fatalf("allowed with denials: %+v", d)
		}
	})
}
