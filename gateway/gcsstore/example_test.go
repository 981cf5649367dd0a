package gcsstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/gcsstore"
)

func ExampleParseURL() {
	u, err := gateway.ParseURL("gs://ckpt-prod/team/query-1?project=analytics&impersonate=job@analytics.iam.gserviceaccount.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := gcsstore.ParseURL(u)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Bucket, cfg.Prefix, cfg.Project, cfg.Impersonate)
	// Output: ckpt-prod team/query-1/ analytics job@analytics.iam.gserviceaccount.com
}

// Open a store on a bucket prefix and write a create-only log entry.
func ExampleOpen() {
	ctx := context.Background()
	u, err := gateway.ParseURL("gs://ckpt-prod/team/query-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := gcsstore.Open(ctx, u)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gateway.Close(s)
	v, err := s.Put(ctx, "commits/0", []byte("v1\n{}\n"), gateway.IfAbsent())
	switch {
	case errors.Is(err, gateway.ErrExists):
		fmt.Println("another writer committed batch 0")
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println("committed at generation", v)
	}
}
