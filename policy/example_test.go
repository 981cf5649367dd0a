package policy_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// A housekeeping script may not delete a checkpoint's log entries: the
// gateway refuses with an error that names the rule.
func ExampleNewAuthorizer() {
	ctx := context.Background()
	e, err := policy.New(ctx, policy.Options{})
	if err != nil {
		panic(err)
	}
	raw := memstore.New()
	raw.Put(ctx, "offsets/0", []byte("v1\n{}\n{}\n"), gateway.IfAbsent())

	a := policy.NewAuthorizer(e, policy.Principal{ID: "cleanup-cron", Kind: policy.KindHousekeeping},
		"s3://bucket/team/q1", policy.Facts{QueryID: "q1"}, nil)
	store := gateway.WithAuthorizer(raw, a)

	err = store.Delete(ctx, "offsets/0", gateway.None())
	fmt.Println(errors.Is(err, gateway.ErrDenied))
	fmt.Println(err)
	// Output:
	// true
	// delete "offsets/0": denied by policy: rule CKG-P004 (delete-under-checkpoint): housekeeping "cleanup-cron" may not delete s3://bucket/team/q1/offsets/0: it is under checkpoint root s3://bucket/team/q1
}

// Auditing a bucket against its lifecycle configuration, read from the JSON
// that `aws s3api get-bucket-lifecycle-configuration` prints.
func ExampleEngine_Audit() {
	ctx := context.Background()
	e, err := policy.New(ctx, policy.Options{})
	if err != nil {
		panic(err)
	}
	bucket := memstore.New()
	bucket.Put(ctx, "streaming/q1/metadata", []byte(`{"id":"q1"}`), gateway.IfAbsent())
	bucket.Put(ctx, "streaming/q1/offsets/0", []byte("v1\n{}\n{}\n"), gateway.IfAbsent())
	lc, err := policy.ParseLifecycle("lifecycle.json", []byte(`{"Rules": [
		{"ID": "tidy", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 2}}]}`))
	if err != nil {
		panic(err)
	}
	rep, err := e.Audit(ctx, []policy.Target{{URL: "s3://bucket", Store: bucket}}, policy.AuditOptions{Buckets: []policy.Bucket{lc}})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.ID, f.Severity, f.Msg)
	}
	// Output:
	// CKG-A001 deny lifecycle rule "tidy" (lifecycle.json) expires files of checkpoint s3://bucket/streaming/q1 after 2 days
	// CKG-A003 deny lifecycle rule "tidy" (lifecycle.json) (expire) acts on checkpoint s3://bucket/streaming/q1 after 2 days, sooner than the outage window of 72 hours: a query stopped that long loses its checkpoint
}
