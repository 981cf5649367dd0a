package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
)

// Open a checkpoint root on S3 and write a log entry create-only.
func ExampleOpen() {
	ctx := context.Background()
	u, err := url.Parse("s3://ckpt-prod/team-a/query-7?region=eu-west-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := s3store.Open(ctx, u)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gateway.Close(st)
	_, err = st.Put(ctx, "commits/12", []byte(`{"nextBatchWatermarkMs":0}`), gateway.IfAbsent())
	switch {
	case errors.Is(err, gateway.ErrExists):
		fmt.Println("another writer committed batch 12")
	case errors.Is(err, gateway.ErrPermission):
		fmt.Println("this principal may not write the checkpoint:", err)
	case err != nil:
		fmt.Println(err)
	}
}

// Use a client built elsewhere (custom HTTP client, endpoint, credentials).
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	st := s3store.New(client, "ckpt-dev", "query-1")
	if err := st.MakeBucket(ctx); err != nil {
		fmt.Println(err)
	}
}
