package engine_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

const spark = "../testdata/spark/"

// TestCheckpointLayoutLikeSpark runs the session query one file per batch
// (so the file source and file sink logs compact at batch 9) and checks the
// checkpoint against Spark's own files and ckgate's inspector.
func TestCheckpointLayoutLikeSpark(t *testing.T) {
	ctx := context.Background()
	files := genEvents(8, 12, 20)
	w := inputWorld(t, files)
	specText := strings.Replace(sessionSpec, "max_files_per_batch: 2", "max_files_per_batch: 1", 1)
	if _, err := runAll(ctx, mustSpec(t, specText), w.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	get := func(key string) []byte {
		t.Helper()
		b, _, err := w.CP.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	golden := func(p string) []byte {
		t.Helper()
		b, err := os.ReadFile(spark + p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// same leading bytes as Spark's entries
	sparkOffsets := golden("checkpoint-version-3.2.0-session-window-with-repartition/offsets/1")
	sparkCommit := golden("checkpoint-version-3.2.0-session-window-with-repartition/commits/1")
	prefix := func(b []byte, n int) []byte { return b[:min(len(b), n)] }
	if o := get("offsets/3"); !bytes.HasPrefix(o, prefix(sparkOffsets, len(`v1`+"\n"+`{"batchWatermarkMs":`))) || bytes.HasSuffix(o, []byte("\n")) {
		t.Fatalf("offsets/3 = %q, Spark's start %q", o, prefix(sparkOffsets, 30))
	}
	if c := get("commits/3"); !bytes.HasPrefix(c, prefix(sparkCommit, len(`v1`+"\n"+`{"nextBatchWatermarkMs":`))) {
		t.Fatalf("commits/3 = %q, Spark's %q", c, sparkCommit)
	}
	seq, err := checkpoint.DecodeOffsetSeq(get("offsets/3"))
	if err != nil || seq.Version != 1 || seq.Metadata == nil || seq.Metadata.Conf["spark.sql.shuffle.partitions"] != "3" || len(seq.Sources) != 1 {
		t.Fatalf("offsets/3: %+v, %v", seq, err)
	}
	if n, err := checkpoint.DecodeFileSourceOffset(seq.Sources[0].JSON); err != nil || n != 3 || seq.Sources[0].JSON != `{"logOffset":3}` {
		t.Fatalf("file source offset %q: %d, %v", seq.Sources[0].JSON, n, err)
	}
	if md := get("metadata"); !regexp.MustCompile(`^\{"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"\}$`).Match(md) {
		t.Fatalf("metadata = %q", md)
	}
	// compacted logs at batch 9, entries shaped as Spark's
	src, err := checkpoint.DecodeFileSourceLog(get("sources/0/9.compact"))
	if err != nil || len(src) != 10 {
		t.Fatalf("sources/0/9.compact: %d entries, %v", len(src), err)
	}
	sinkLog, _, err := w.Store("out").Get(ctx, "_spark_metadata/9.compact")
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`"([a-zA-Z]+)":`)
	sparkSink := golden("file-sink-log-version-2.1.0/8")
	wantKeys := keys.FindAllString(strings.Split(string(sparkSink), "\n")[1], -1)
	lines := strings.Split(string(sinkLog), "\n")
	if lines[0] != "v1" || len(lines) < 2 {
		t.Fatalf("_spark_metadata/9.compact = %q", sinkLog)
	}
	for _, l := range lines[1:] {
		if got := keys.FindAllString(l, -1); strings.Join(got, "") != strings.Join(wantKeys, "") {
			t.Fatalf("sink log line %s: fields %v, Spark's %v", l, got, wantKeys)
		}
	}
	if _, err := w.CP.Stat(ctx, "state/0/_metadata/metadata"); err != nil {
		t.Fatal(err)
	}
	// ckgate's inspector finds nothing wrong
	r, err := checkpoint.Inspect(ctx, w.CP, checkpoint.Options{Sink: w.Store("out")})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.HasErrors() || len(r.Findings) > 0 {
		t.Fatalf("inspect: status %v, findings %+v", r.Status, r.Findings)
	}
}
