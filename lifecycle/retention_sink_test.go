package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// normalize makes a listing's times and versions stable for golden files.
func normalize(l lifecycle.Listing) lifecycle.Listing {
	for i := range l.Objects {
		l.Objects[i].Modified = retNow.Add(-30 * 24 * time.Hour)
		l.Objects[i].Version = ""
	}
	return l
}

// TestPlanGoldenSinkSpark pins --sink on the manifest log Spark 2.1.0
// wrote (7.compact, 8, 9): readers need 7.compact onward, so with one
// batch retained nothing goes; by default all is kept.
func TestPlanGoldenSinkSpark(t *testing.T) {
	st, err := filestore.New("../testdata/spark/file-sink-log-version-2.1.0")
	if err != nil {
		t.Fatal(err)
	}
	// The fixture is the log directory itself: list it as _spark_metadata/.
	var l lifecycle.Listing
	l.Sink = true
	for a, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		a.Key = checkpoint.SinkMetadataDir + "/" + a.Key
		l.Objects = append(l.Objects, a)
	}
	for _, min := range []int{1, 0} {
		r, err := lifecycle.RetentionPlan(normalize(l), lifecycle.RetentionPolicy{MinBatches: min, Now: retNow})
		if err != nil {
			t.Fatal(err)
		}
		checkPlanGolden(t, fmt.Sprintf("sink-2.1.0-min%d", min), renderPlan(r))
	}
}

// TestPlanGoldenSinkEngine pins --sink on the output of ckgate's engine
// after 12 input files: manifests 0 … 8, 9.compact, 10 … 12.
func TestPlanGoldenSinkEngine(t *testing.T) {
	ctx := context.Background()
	w := newRetWorld()
	w.writeInput(t, 0, 12)
	w.run(t, 1)
	l, err := lifecycle.ReadSinkListing(ctx, w.Store("out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, min := range []int{2, 0} {
		r, err := lifecycle.RetentionPlan(normalize(l), lifecycle.RetentionPolicy{MinBatches: min, Now: retNow})
		if err != nil {
			t.Fatal(err)
		}
		checkPlanGolden(t, fmt.Sprintf("sink-engine-min%d", min), renderPlan(r))
	}
	// --retain-for keeps the entries younger than it, and the compaction
	// they are read from.
	for i := range l.Objects {
		id, _, _ := checkpoint.ParseLogFileName(strings.TrimPrefix(l.Objects[i].Key, checkpoint.SinkMetadataDir+"/"))
		l.Objects[i].Modified = retNow.Add(-time.Duration(12-id) * time.Hour)
	}
	r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{MinBatches: 1, RetainFor: 5*time.Hour + time.Minute, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	// entries 8 … 12 are younger than 5h: compaction 9 is not at or below 8,
	// so nothing before it may go.
	wantActions(t, r, map[string]string{"_spark_metadata/0": lifecycle.Keep, "_spark_metadata/12": lifecycle.Keep})
	if len(r.Remove) != 0 {
		t.Fatalf("retain-for: removes %v", r.Remove)
	}
}

// TestPlanSinkNeverRemovesData: in a sink listing only manifest log files
// can go; data files (even ones named like checkpoint files) stay.
func TestPlanSinkNeverRemovesData(t *testing.T) {
	var keys []string
	for n := 0; n <= 25; n++ {
		name := fmt.Sprint(n)
		if (n+1)%10 == 0 {
			name += ".compact"
		}
		keys = append(keys, "_spark_metadata/"+name, fmt.Sprintf("part-%05d-x.c000.jsonl", n))
	}
	keys = append(keys, "_spark_metadata/.8.crc", "_spark_metadata/notes.txt", "offsets/0", "offsets/1", "commits/0",
		"state/0/0/1.delta", "_ckgate/effects/1/0", "sub/_spark_metadata/3", "date=2026-01-01/part-1.jsonl")
	l := lifecycle.Listing{Objects: synth(1000*time.Hour, keys...), Sink: true}
	r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{MinBatches: 1, Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Remove {
		if !strings.HasPrefix(d.Key, "_spark_metadata/") || d.Key == "_spark_metadata/notes.txt" {
			t.Errorf("a sink plan removes %s (%s)", d.Key, d.Reason)
		}
	}
	wantActions(t, r, map[string]string{
		"_spark_metadata/0":          lifecycle.Remove,
		"_spark_metadata/.8.crc":     lifecycle.Remove,
		"_spark_metadata/18":         lifecycle.Remove,
		"_spark_metadata/19.compact": lifecycle.Keep,
		"_spark_metadata/25":         lifecycle.Keep,
		"part-00000-x.c000.jsonl":    lifecycle.Keep,
		"offsets/0":                  lifecycle.Keep,
		"state/0/0/1.delta":          lifecycle.Keep,
		"_ckgate/effects/1/0":        lifecycle.Keep,
		"sub/_spark_metadata/3":      lifecycle.Keep,
	})
	if r.RetainFrom != nil {
		t.Fatalf("a sink plan has batch bounds: %d", *r.RetainFrom)
	}
}

func TestReadSinkNotASink(t *testing.T) {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put(t, st, "part-0.jsonl", "{}")
	if _, err := lifecycle.ReadSinkListing(context.Background(), st); err == nil || !strings.Contains(err.Error(), "_spark_metadata") {
		t.Fatalf("an output without a manifest log: %v", err)
	}
}

// TestRetentionSinkPolicy: through the authorizer, a retention principal
// deletes the planned manifests of a sink and nothing else: not a data
// file, not a manifest readers need.
func TestRetentionSinkPolicy(t *testing.T) {
	ctx := context.Background()
	w := newRetWorld()
	w.writeInput(t, 0, 12)
	w.run(t, 1)
	out := w.Store("out")
	l, err := lifecycle.ReadSinkListing(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{MinBatches: 2, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.New(ctx, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	auth := policy.NewAuthorizer(eng, policy.Principal{ID: "ret", Kind: policy.KindRetention}, "mem://out",
		policy.Facts{}, nil, policy.WithPlan(&policy.Plan{ID: "s", Obsolete: r.Obsolete()}))
	st := gateway.WithAuthorizer(out, auth)
	var data string
	for a, err := range out.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(a.Key, "part-") {
			data = a.Key
			break
		}
	}
	for _, k := range []string{data, checkpoint.SinkMetadataDir + "/9.compact", checkpoint.SinkMetadataDir + "/12"} {
		evil := &lifecycle.RetentionResult{Remove: []lifecycle.Decision{{Key: k}}}
		if _, err := lifecycle.ApplyRetention(ctx, st, evil, lifecycle.RetentionApplyOptions{}); !errors.Is(err, gateway.ErrDenied) {
			t.Fatalf("deleting %s: %v, want ErrDenied", k, err)
		}
	}
	res, err := lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{})
	if err != nil || res.Deleted != len(r.Remove) || res.Deleted == 0 {
		t.Fatalf("apply: %v, %+v of %d", err, res, len(r.Remove))
	}
	if _, _, err := checkpoint.ReadFileSinkLog(ctx, out, checkpoint.SinkMetadataDir); err != nil {
		t.Fatalf("the sink log does not read after retention: %v", err)
	}
}
