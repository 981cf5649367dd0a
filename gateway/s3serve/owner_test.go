package s3serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/policy"
)

func wantOwnerRefusal(t *testing.T, what string, err error) {
	t.Helper()
	if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P014") {
		t.Fatalf("%s: %v (HTTP %d), want 403 naming CKG-P014", what, err, status(err))
	}
}

func readOwner(t *testing.T, dir, root string) policy.RootOwner {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "ckpt", root, filepath.FromSlash(policy.RootOwnerKey)))
	if err != nil {
		t.Fatal(err)
	}
	var o policy.RootOwner
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestServeRootOwner: the first job principal to write a root's metadata
// owns the root; a second query's credentials are refused everywhere under
// it (offsets, state, deletes, the owner record itself), by this server and
// by a new one over the same store (the record is in the store).
func TestServeRootOwner(t *testing.T) {
	ep, dir := serve(t)
	ctx := context.Background()
	orders := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	billing := client(ep, "BILLINGJOB", "billing-secret-0123456789")
	if err := s3aCommit(ctx, orders, "q1/metadata", `{"id":"q1"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if err := s3aCommit(ctx, orders, "q1/offsets/0", "v1\n{}\n0", "o"); err != nil {
		t.Fatalf("offsets/0: %v", err)
	}
	if o := readOwner(t, dir, "q1"); o.Principal != "orders-job" || o.Kind != "job" {
		t.Fatalf("owner record %+v, want orders-job", o)
	}
	put := func(c *s3.Client, key string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key), Body: strings.NewReader("x")})
		return err
	}
	wantOwnerRefusal(t, "second query commits offsets/1", s3aCommit(ctx, billing, "q1/offsets/1", "v1\n{}\n1", "b"))
	wantOwnerRefusal(t, "second query writes state", put(billing, "q1/state/0/0/1.delta"))
	_, err := billing.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/offsets/.0.o.tmp")})
	wantOwnerRefusal(t, "second query deletes a temp", err)
	wantOwnerRefusal(t, "owner rewrites its record", put(orders, "q1/"+policy.RootOwnerKey))
	wantOwnerRefusal(t, "second query rewrites the record", put(billing, "q1/"+policy.RootOwnerKey))
	if o := readOwner(t, dir, "q1"); o.Principal != "orders-job" {
		t.Fatalf("owner record now %+v", o)
	}
	// The owner goes on; the second query has a root of its own.
	if err := s3aCommit(ctx, orders, "q1/commits/0", "v1\n{}", "c"); err != nil {
		t.Fatalf("owner commits/0: %v", err)
	}
	if err := s3aCommit(ctx, billing, "q2/metadata", `{"id":"q2"}`, "m"); err != nil {
		t.Fatalf("second query's own root: %v", err)
	}
	wantOwnerRefusal(t, "first query writes into q2", put(orders, "q2/state/0/0/1.delta"))

	// A new server over the same store reads the records.
	ep2 := serveDir(t, dir)
	billing2 := client(ep2, "BILLINGJOB", "billing-secret-0123456789")
	wantOwnerRefusal(t, "second query after a restart", s3aCommit(ctx, billing2, "q1/offsets/1", "v1\n{}\n1", "b"))
	if err := s3aCommit(ctx, client(ep2, "ORDERSJOB", "orders-secret-0123456789"), "q1/offsets/1", "v1\n{}\n1", "o"); err != nil {
		t.Fatalf("owner after a restart: %v", err)
	}
}

// TestServeRootOwnerRace: two queries starting on one new root at once,
// through two servers over one store (replicas): exactly one owns it, and
// the other's writes under it are refused.
func TestServeRootOwnerRace(t *testing.T) {
	ep, dir := serve(t)
	ep2 := serveDir(t, dir)
	ctx := context.Background()
	for round := range 8 {
		root := fmt.Sprintf("race%d", round)
		drivers := []*s3.Client{client(ep, "ORDERSJOB", "orders-secret-0123456789"), client(ep2, "BILLINGJOB", "billing-secret-0123456789")}
		errs := make([]error, len(drivers))
		var wg sync.WaitGroup
		for i, c := range drivers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[i] = s3aCommit(ctx, c, root+"/metadata", fmt.Sprintf(`{"id":"%d"}`, i), fmt.Sprint(i)); errs[i] == nil {
					errs[i] = s3aCommit(ctx, c, root+"/offsets/0", "v1\n{}\n0", fmt.Sprint(i))
				}
			}()
		}
		wg.Wait()
		owner := readOwner(t, dir, root).Principal
		ids := []string{"orders-job", "billing-job"}
		for i, err := range errs {
			if ids[i] == owner {
				if err != nil {
					t.Fatalf("round %d: owner %s failed: %v", round, owner, err)
				}
				continue
			}
			if err == nil {
				t.Fatalf("round %d: %s (not the owner %s) committed too", round, ids[i], owner)
			}
		}
	}
}

// TestServeRootOwnerRecreated: a checkpoint deleted outside the front door
// (an operator resetting the query, another replica) and started again by
// another query belongs to that query, for a server that had seen the old
// owner too: no server holds on to an owner the store no longer records.
func TestServeRootOwnerRecreated(t *testing.T) {
	ep, dir := serve(t)
	ep2 := serveDir(t, dir) // a replica beside the first
	ctx := context.Background()
	orders := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	if err := s3aCommit(ctx, orders, "q1/metadata", `{"id":"q1"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if err := s3aCommit(ctx, orders, "q1/offsets/0", "v1\n{}\n0", "o"); err != nil {
		t.Fatalf("offsets/0: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "ckpt", "q1")); err != nil {
		t.Fatal(err)
	}
	billing := client(ep2, "BILLINGJOB", "billing-secret-0123456789")
	if err := s3aCommit(ctx, billing, "q1/metadata", `{"id":"q1b"}`, "m"); err != nil {
		t.Fatalf("the new query's metadata: %v", err)
	}
	if o := readOwner(t, dir, "q1"); o.Principal != "billing-job" {
		t.Fatalf("owner record %+v, want billing-job", o)
	}
	// The first query's zombie, through the server that saw it own q1.
	wantOwnerRefusal(t, "old owner commits into the new query's root", s3aCommit(ctx, orders, "q1/offsets/0", "v1\n{}\n0", "z"))
	_, err := orders.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/1.delta"), Body: strings.NewReader("x")})
	wantOwnerRefusal(t, "old owner writes state into the new query's root", err)
	if err := s3aCommit(ctx, billing, "q1/offsets/0", "v1\n{}\n0", "b"); err != nil {
		t.Fatalf("the new owner commits offsets/0: %v", err)
	}
}
