package s3serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
)

// TestServeFencesZombieDriver, with each file manager and S3A auditing on:
// a driver writes offsets/1 and hangs; its query is restarted as a new
// process, which re-runs batch 1 from that offsets/1 and commits it and
// batch 2. The old process (a zombie still running) is refused from then
// on, its state writes and log entries alike, by rule CKG-P015, while
// the new one goes on; the checkpoint inspects clean.
func TestServeFencesZombieDriver(t *testing.T) {
	ctx := context.Background()
	serveEachManager(t, "zombie", func(t *testing.T, ep, dir string, m s3atrace.Manager, root string) {
		oldPS, newPS := s3atrace.UUID(), s3atrace.UUID()
		old := sparkDriver(ep, "ORDERSJOB", root, m, oldPS)
		old.Partitions = 1
		if err := s3atrace.Run(ctx, old.Query(1)); err != nil {
			t.Fatalf("first driver: %v", err)
		}
		hung := old.Batch(1)
		offsets := group(hung, root+"/offsets/1")
		if err := s3atrace.Run(ctx, offsets); err != nil {
			t.Fatalf("first driver's offsets/1: %v", err)
		}
		rest := hung[len(offsets):]
		// Before the new driver commits, both may write (only atomicity decides).
		restarted := sparkDriver(ep, "ORDERSJOB", root, m, newPS)
		restarted.Partitions = 1
		steps, err := restarted.Resume(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(steps, func(s s3atrace.Step) bool { return strings.HasSuffix(s.Key, "offsets/1") }) {
			t.Fatal("the restart rewrites offsets/1; Spark re-runs it from the log")
		}
		if err := s3atrace.Run(ctx, steps); err != nil {
			t.Fatalf("restarted driver: %v", err)
		}
		var rec gateway.Committer
		data, err := os.ReadFile(filepath.Join(dir, "ckpt", root, filepath.FromSlash(gateway.CommitterKey)))
		if err != nil || json.Unmarshal(data, &rec) != nil {
			t.Fatalf("committer record %q: %v", data, err)
		}
		if rec.Process != newPS || rec.Batch != 2 || !slices.Contains(rec.Fenced, oldPS) {
			t.Fatalf("committer record %+v", rec)
		}
		// The zombie wakes up: its state write of batch 1, then its next batch.
		for what, steps := range map[string][]s3atrace.Step{"batch 1's state": rest, "offsets/3": old.Batch(3)} {
			err := s3atrace.Run(ctx, steps)
			if status(err) != 403 || !strings.Contains(err.Error(), "CKG-P015") {
				t.Fatalf("zombie writes %s: %v (HTTP %d), want 403 naming CKG-P015", what, err, status(err))
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "ckpt", root, "offsets", "3")); err == nil {
			t.Fatal("the zombie's offsets/3 was written")
		}
		if err := s3atrace.Run(ctx, restarted.Batch(3)); err != nil {
			t.Fatalf("restarted driver's batch 3: %v", err)
		}
		wantClean(t, inspectRoot(t, dir, root, ""), 3)
		_, err = restarted.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(root + "/" + gateway.CommitterKey),
			Body: strings.NewReader(`{"process":"x","batch":99}`)})
		if status(err) != 403 || !strings.Contains(err.Error(), "CKG-P014") {
			t.Fatalf("client writes the committer record: %v, want 403 naming CKG-P014", err)
		}
	})
}
