package policy_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// bucketStore returns a memstore laid out like a shared bucket:
//
//	streaming/q1/           checkpoint of q1
//	streaming/q1/nested/    a second query's checkpoint inside it
//	streaming/q5/           q5, whose writer record names another query
//	tables/events/          a Delta table with a checkpoint in a data dir
//	                        and one under _checkpoints/
//	other/broken/           a checkpoint with unreadable metadata
//	other/state-only/state/0/_metadata/metadata   not a checkpoint
func bucketStore(t *testing.T) gateway.Store {
	t.Helper()
	s := memstore.New()
	put := func(k, v string) {
		if _, err := s.Put(context.Background(), k, []byte(v), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint := func(root, id string) {
		put(root+"/metadata", fmt.Sprintf(`{"id":%q}`, id))
		put(root+"/offsets/0", "v1\n{}\n")
		put(root+"/commits/0", "v1\n{}\n")
	}
	checkpoint("streaming/q1", "q1")
	checkpoint("streaming/q1/nested", "q2")
	checkpoint("streaming/q5", "q5")
	w := gateway.WriterRecord{Epoch: 3, QueryID: "q6", Owner: "h:1", WriteID: "w"}
	put("streaming/q5/_ckgate/writer", string(w.Encode()))
	put("tables/events/_delta_log/00000000000000000000.json", "{}")
	put("tables/events/part-0000.parquet", "PAR1")
	checkpoint("tables/events/checkpoint", "q3")
	checkpoint("tables/events/_checkpoints/q4", "q4")
	put("other/broken/metadata", "garbage")
	put("other/broken/offsets/0", "v1")
	put("other/state-only/state/0/_metadata/metadata", `{"id":"x"}`)
	return s
}

type hit struct{ id, resource string }

func hits(r *policy.Report) []hit {
	var out []hit
	for _, f := range r.Findings {
		out = append(out, hit{f.ID, f.Resource})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return slices.Compact(out)
}

func TestDiscover(t *testing.T) {
	cps, err := policy.Discover(context.Background(), policy.Target{URL: "s3://bucket", Store: bucketStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cp := range cps {
		got = append(got, fmt.Sprintf("%s id=%s writer=%s err=%t delta=%v", cp.URL, cp.QueryID, cp.WriterQueryID, cp.Error != "", cp.DeltaTable))
	}
	want := []string{
		"s3://bucket/other/broken id= writer= err=true delta=<nil>",
		"s3://bucket/streaming/q1 id=q1 writer= err=false delta=<nil>",
		"s3://bucket/streaming/q1/nested id=q2 writer= err=false delta=<nil>",
		"s3://bucket/streaming/q5 id=q5 writer=q6 err=false delta=<nil>",
		"s3://bucket/tables/events/_checkpoints/q4 id=q4 writer= err=false delta=&{s3://bucket/tables/events _checkpoints/q4}",
		"s3://bucket/tables/events/checkpoint id=q3 writer= err=false delta=&{s3://bucket/tables/events checkpoint}",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("discovered\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e := cps[1].Entries; !slices.Equal(e, []string{"commits/", "metadata", "nested/", "offsets/"}) {
		t.Fatalf("entries %v", e)
	}
	if cps[1].Bucket != "bucket" || cps[1].Path != "streaming/q1" {
		t.Fatalf("location %+v", cps[1])
	}
}

// TestDiscoverSparkCheckpoints finds the real Spark checkpoints of
// testdata/spark on the local disk, and nothing else.
func TestDiscoverSparkCheckpoints(t *testing.T) {
	st, err := filestore.New("../testdata/spark")
	if err != nil {
		t.Fatal(err)
	}
	cps, err := policy.Discover(context.Background(), policy.Target{URL: "../testdata/spark", Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) < 10 {
		t.Fatalf("found %d Spark checkpoints", len(cps))
	}
	for _, cp := range cps {
		if cp.QueryID == "" || cp.Error != "" || strings.Contains(cp.Root, "_metadata") || !strings.HasPrefix(cp.URL, "file:///") {
			t.Errorf("checkpoint %+v", cp)
		}
	}
}

func TestAudit(t *testing.T) {
	e := engine(t, policy.Options{})
	lc := parseFixture(t, "s3/mixed.json")
	lc.Bucket = "bucket"
	ver := parseFixture(t, "s3/versioning-suspended.json")
	rep, err := e.Audit(context.Background(), []policy.Target{{URL: "s3://bucket", Store: bucketStore(t)}},
		policy.AuditOptions{Buckets: []policy.Bucket{lc, ver}, KnownQueries: []policy.KnownQuery{{QueryID: "q9", Root: "s3://bucket/tables/events/_checkpoints/q4"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []hit{
		{"CKG-A002", "s3://bucket/streaming/q1"},        // streaming/ to GLACIER after 90 days
		{"CKG-A002", "s3://bucket/streaming/q1/nested"}, //
		{"CKG-A002", "s3://bucket/streaming/q5"},        //
		{"CKG-A003", "s3://bucket/streaming/q1"},        // noncurrent expiry after 1 day
		{"CKG-A003", "s3://bucket/streaming/q1/nested"}, //
		{"CKG-A003", "s3://bucket/streaming/q5"},        //
		{"CKG-A004", "s3://bucket/tables/events/checkpoint"},
		{"CKG-A005", "s3://bucket/streaming/q1/nested"},           // nested roots
		{"CKG-A005", "s3://bucket/streaming/q5"},                  // writer record of q6
		{"CKG-A005", "s3://bucket/tables/events/_checkpoints/q4"}, // known query q9 on the same root
		{"CKG-A007", "s3://bucket/other/broken"},                  // versioning suspended
		{"CKG-A007", "s3://bucket/streaming/q1"},
		{"CKG-A007", "s3://bucket/streaming/q1/nested"},
		{"CKG-A007", "s3://bucket/streaming/q5"},
		{"CKG-A007", "s3://bucket/tables/events/_checkpoints/q4"},
		{"CKG-A007", "s3://bucket/tables/events/checkpoint"},
		{"CKG-A009", "s3://bucket/streaming/q1"}, // STANDARD_IA after 30 days
		{"CKG-A009", "s3://bucket/streaming/q1/nested"},
		{"CKG-A009", "s3://bucket/streaming/q5"},
		{"CKG-A010", "s3://bucket/other/broken"},
	}
	sort.Slice(want, func(i, j int) bool { return fmt.Sprint(want[i]) < fmt.Sprint(want[j]) })
	if got := hits(rep); !slices.Equal(got, want) {
		t.Fatalf("findings\n%v\nwant\n%v\n%+v", got, want, rep.Findings)
	}
	if !rep.Failed(false) || rep.Count(policy.SeverityWarn) != 9 || rep.Count(policy.SeverityUnknown) != 1 {
		t.Fatalf("counts: %s", rep.Summary())
	}
}

// TestAuditFixtures audits one checkpoint against each lifecycle fixture.
func TestAuditFixtures(t *testing.T) {
	e := engine(t, policy.Options{})
	store := memstore.New()
	for _, k := range []string{"streaming/q1/metadata", "streaming/q1/offsets/0", "checkpoints/streaming/q1/metadata", "checkpoints/streaming/q1/offsets/0",
		"streaming/checkpoints/q7/metadata", "streaming/checkpoints/q7/offsets/0"} {
		if _, err := store.Put(context.Background(), k, []byte(`{"id":"q1"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		fixture, url string
		want         []string // rule ids found
	}{
		{"s3/whole-bucket.json", "file:///data", []string{"CKG-A001"}}, // 30 days, enabled; the disabled 1-day rule passes
		{"s3/mixed.json", "file:///data", []string{"CKG-A002", "CKG-A003", "CKG-A009"}},
		{"s3/unreadable.json", "file:///data", []string{"CKG-A008"}},
		{"s3/object-lock.json", "file:///data", []string{"CKG-A006"}},
		{"gcs/lifecycle.json", "file:///data", []string{"CKG-A001", "CKG-A003", "CKG-A009"}},
		{"gcs/bucket.json", "gs://acme-streaming", []string{"CKG-A009"}}, // soft delete 7 days: no A007
		{"gcs/bucket.json", "gs://another-bucket", []string{"CKG-A008"}}, // not this bucket's configuration: unknown
		{"gcs/gcloud-describe.json", "file:///data", []string{"CKG-A001", "CKG-A003", "CKG-A006", "CKG-A007"}},
		{"azure/management-policy.json", "az://acmestreaming/checkpoints", []string{"CKG-A001", "CKG-A002", "CKG-A003", "CKG-A009"}},
		{"azure/management-policy.json", "az://acmestreaming/other", nil},
		{"azure/management-policy-arm.json", "az://acmestreaming/checkpoints", []string{"CKG-A009"}},
		{"azure/blob-service-properties.json", "az://acmestreaming/checkpoints", []string{"CKG-A007"}},
	} {
		t.Run(tc.fixture+" "+tc.url, func(t *testing.T) {
			b := parseFixture(t, tc.fixture)
			rep, err := e.Audit(context.Background(), []policy.Target{{URL: tc.url, Store: store}},
				policy.AuditOptions{Buckets: []policy.Bucket{b}})
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, f := range rep.Findings {
				if !slices.Contains(ids, f.ID) {
					ids = append(ids, f.ID)
				}
			}
			sort.Strings(ids)
			if !slices.Equal(ids, append([]string{}, tc.want...)) {
				t.Fatalf("rules %v, want %v\n%+v", ids, tc.want, rep.Findings)
			}
			for _, f := range rep.Findings {
				if f.ID == "CKG-A001" && !strings.Contains(f.Msg, "days") && !strings.Contains(f.Msg, " on ") {
					t.Errorf("finding does not say when: %s", f.Msg)
				}
			}
		})
	}
}

func TestAuditOutageWindow(t *testing.T) {
	e := engine(t, policy.Options{})
	b := parseFixture(t, "s3/whole-bucket.json") // expires after 30 days
	for window, want := range map[time.Duration]bool{72 * time.Hour: false, 31 * 24 * time.Hour: true, 30 * 24 * time.Hour: false} {
		rep, err := e.Audit(context.Background(), []policy.Target{{URL: "file:///d", Store: seeded(t)}},
			policy.AuditOptions{Buckets: []policy.Bucket{b}, OutageWindow: window})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(rep.Findings, func(f policy.Finding) bool { return f.ID == "CKG-A003" })
		if got != want {
			t.Errorf("window %v: CKG-A003 %t, want %t", window, got, want)
		}
	}
}

type lifecycleStore struct {
	gateway.Store
	data []byte
	err  error
}

func (s lifecycleStore) BucketLifecycle(context.Context) ([]byte, error) { return s.data, s.err }
func (s lifecycleStore) Unwrap() gateway.Store                           { return s.Store }

func TestAuditLiveLifecycle(t *testing.T) {
	e := engine(t, policy.Options{})
	whole := `{"Rules":[{"ID":"all","Filter":{},"Status":"Enabled","Expiration":{"Days":30}}]}`
	for _, tc := range []struct {
		name  string
		store gateway.Store
		want  string
	}{
		{"read live", gateway.WithPrefix(lifecycleStore{Store: seeded(t), data: []byte(whole)}, ""), "CKG-A001"},
		{"cannot read", seeded(t), "CKG-A008"},
		{"read fails", lifecycleStore{Store: seeded(t), err: errors.New("AccessDenied")}, "CKG-A008"},
		{"unparsable", lifecycleStore{Store: seeded(t), data: []byte("<xml/>")}, "CKG-A008"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := e.Audit(context.Background(), []policy.Target{{URL: "s3://bucket/team/q1", Store: tc.store}}, policy.AuditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Findings) == 0 || rep.Findings[0].ID != tc.want {
				t.Fatalf("findings %+v, want %s", rep.Findings, tc.want)
			}
			if tc.want == "CKG-A008" && (rep.Findings[0].Severity != "unknown" || !rep.Failed(false)) {
				t.Fatalf("an unreadable lifecycle passed: %+v", rep.Findings)
			}
		})
	}
}

func TestAuditListErrorIsAnError(t *testing.T) {
	failing := gateway.Intercept(memstore.New(), func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		return gateway.E(string(c.Op), c.Key, gateway.ErrPermission, nil)
	})
	_, err := engine(t, policy.Options{}).Audit(context.Background(), []policy.Target{{URL: "s3://b", Store: failing}}, policy.AuditOptions{})
	if !errors.Is(err, gateway.ErrPermission) {
		t.Fatalf("err = %v, want ErrPermission", err)
	}
}

func TestReportEncodings(t *testing.T) {
	e := engine(t, policy.Options{})
	rep, err := e.Audit(context.Background(), []policy.Target{{URL: "s3://bucket", Store: bucketStore(t)}},
		policy.AuditOptions{Buckets: []policy.Bucket{parseFixture(t, "s3/whole-bucket.json")}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := rep.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(j, &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Failures != rep.Count("deny")+rep.Count("unknown") || suite.Tests < suite.Failures {
		t.Fatalf("junit %+v for %s", suite, rep.Summary())
	}
	s, err := rep.SARIF(e.Rules())
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(s, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != len(rep.Findings) {
		t.Fatalf("sarif %s", s)
	}
	for _, r := range log.Runs[0].Results {
		if r.Level != "error" && r.Level != "warning" && r.Level != "note" {
			t.Fatalf("level %q", r.Level)
		}
	}
}
