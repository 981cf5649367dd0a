package s3serve_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// sparkPurge is HDFSMetadataLog.purge(threshold) as S3A runs it: list the
// log directory and delete every batch file below threshold.
func sparkPurge(ctx context.Context, c *s3.Client, dir string, threshold int) error {
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt"), Prefix: aws.String(dir + "/")})
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, o := range out.Contents {
		n, err := strconv.Atoi(strings.TrimPrefix(*o.Key, dir+"/"))
		if err != nil || n >= threshold {
			continue
		}
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: o.Key}); err != nil {
			return fmt.Errorf("purge %s: %w", *o.Key, err)
		}
	}
	return nil
}

// TestServeSparkPurgeTrace replays 120 batches of a Spark query with
// minBatchesToRetain 10 through the front door: each batch commits
// offsets/N, a state delta and commits/N the way S3A does, and purges what
// Spark purges (log entries below N-10, state versions it no longer needs).
// Every purge delete is allowed; a delete of an entry a restart needs, and
// any delete by housekeeping, is refused naming the rule; the checkpoint
// ends with exactly the entries Spark keeps.
func TestServeSparkPurgeTrace(t *testing.T) {
	ep, dir := serve(t)
	job := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	const batches, retain = 120, 10
	if err := s3aCommit(ctx, job, "q1/metadata", `{"id":"q"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	for n := range batches {
		if err := s3aCommit(ctx, job, fmt.Sprintf("q1/offsets/%d", n), "v1\n{}\n0", "o"); err != nil {
			t.Fatalf("batch %d offsets: %v", n, err)
		}
		if n >= retain { // MicroBatchExecution purges once offsets/N is written
			for _, log := range []string{"q1/offsets", "q1/commits"} {
				if err := sparkPurge(ctx, job, log, n-retain); err != nil {
					t.Fatalf("batch %d: %v", n, err)
				}
			}
		}
		if err := s3aCommit(ctx, job, fmt.Sprintf("q1/state/0/0/%d.delta", n+1), "delta", "s"); err != nil {
			t.Fatalf("batch %d state: %v", n, err)
		}
		if n >= retain {
			if _, err := job.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(fmt.Sprintf("q1/state/0/0/%d.delta", n-retain))}); err != nil {
				t.Fatalf("batch %d state purge: %v", n, err)
			}
		}
		if err := s3aCommit(ctx, job, fmt.Sprintf("q1/commits/%d", n), "v1\n{}", "c"); err != nil {
			t.Fatalf("batch %d commits: %v", n, err)
		}
	}
	names := func(log string) []int {
		ents, err := os.ReadDir(filepath.Join(dir, "ckpt", "q1", log))
		if err != nil {
			t.Fatal(err)
		}
		var ns []int
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				ns = append(ns, n)
			}
		}
		slices.Sort(ns)
		return ns
	}
	want := make([]int, 0, retain+1)
	for n := batches - 1 - retain; n < batches; n++ {
		want = append(want, n)
	}
	if got := names("offsets"); !slices.Equal(got, want) {
		t.Fatalf("offsets left %v, want %v (Spark keeps minBatchesToRetain+1)", got, want)
	}
	if got := names("commits"); !slices.Equal(got, want) {
		t.Fatalf("commits left %v, want %v", got, want)
	}
	// What a restart needs stays: offsets/119, offsets/118 and commits/119.
	for _, k := range []string{"q1/offsets/118", "q1/offsets/119", "q1/commits/119", "q1/metadata"} {
		_, err := job.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(k)})
		if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P002") {
			t.Fatalf("job deletes %s: %v (HTTP %d), want 403 naming CKG-P002", k, err, status(err))
		}
	}
	hk := client(ep, "CLEANER", "cleaner-secret-0123456789")
	for _, k := range []string{"q1/offsets/110", "q1/state/0/0/115.delta"} {
		_, err := hk.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(k)})
		if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P004") {
			t.Fatalf("housekeeping deletes %s: %v (HTTP %d), want 403 naming CKG-P004", k, err, status(err))
		}
	}
	if got := names("offsets"); !slices.Equal(got, want) {
		t.Fatalf("after the refused deletes offsets are %v, want %v", got, want)
	}
}
