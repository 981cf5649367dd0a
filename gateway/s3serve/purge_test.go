package s3serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
)

// TestServeSparkPurgeTrace replays 120 batches of a stateful Spark query
// with minBatchesToRetain 10 through the front door, with each file
// manager: each batch commits offsets/N, its state and commits/N the way
// S3A does, and purges what Spark purges (log entries below N-10, the
// state versions no retained batch needs). Every purge delete is allowed;
// a delete of an entry a restart needs, and any delete by housekeeping, is
// refused naming the rule; the checkpoint ends with exactly the entries
// Spark keeps and inspects clean.
func TestServeSparkPurgeTrace(t *testing.T) {
	ctx := context.Background()
	const batches, retain = 120, 10
	serveEachManager(t, "purge", func(t *testing.T, ep, dir string, m s3atrace.Manager, root string) {
		job := sparkDriver(ep, "ORDERSJOB", root, m, "")
		job.Partitions, job.MinBatchesToRetain = 1, retain
		if err := s3atrace.Run(ctx, job.Query(batches)); err != nil {
			t.Fatal(err)
		}
		names := func(log string) []int {
			ents, err := os.ReadDir(filepath.Join(dir, "ckpt", root, log))
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
		wantClean(t, inspectRoot(t, dir, root, ""), batches-1)
		// What a restart needs stays: offsets/119, offsets/118 and commits/119.
		for _, k := range []string{"offsets/118", "offsets/119", "commits/119", "metadata"} {
			_, err := job.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(root + "/" + k)})
			if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P002") {
				t.Fatalf("job deletes %s: %v (HTTP %d), want 403 naming CKG-P002", k, err, status(err))
			}
		}
		hk := client(ep, "CLEANER", "cleaner-secret-0123456789")
		for _, k := range []string{"offsets/110", "state/0/0/115.delta"} {
			_, err := hk.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(root + "/" + k)})
			if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P004") {
				t.Fatalf("housekeeping deletes %s: %v (HTTP %d), want 403 naming CKG-P004", k, err, status(err))
			}
		}
		if got := names("offsets"); !slices.Equal(got, want) {
			t.Fatalf("after the refused deletes offsets are %v, want %v", got, want)
		}
	})
}
