package gateway_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

func TestRegistryTryTimeout(t *testing.T) {
	var gotQuery string
	var gotTimeout time.Duration
	reg := gateway.NewRegistry()
	for _, scheme := range []string{"s3", "file"} {
		reg.Register(scheme, func(ctx context.Context, u *url.URL) (gateway.Store, error) {
			gotQuery, gotTimeout = u.RawQuery, gateway.TryTimeout(ctx)
			return nil, nil
		})
	}
	ctx := context.Background()
	if _, err := reg.Open(ctx, "s3://bucket/p?region=eu-west-1&try_timeout=2500ms"); err != nil {
		t.Fatal(err)
	}
	if gotTimeout != 2500*time.Millisecond || gotQuery != "region=eu-west-1" {
		t.Fatalf("opener saw timeout %s and query %q, want 2.5s and region=eu-west-1 only", gotTimeout, gotQuery)
	}
	if _, err := reg.Open(ctx, "s3://bucket/p?region=eu-west-1"); err != nil || gotTimeout != 0 {
		t.Fatalf("without try_timeout: timeout %s, err %v; want none", gotTimeout, err)
	}
	for raw, want := range map[string]string{
		"s3://bucket?try_timeout=soon":               `"soon"`,
		"s3://bucket?try_timeout=1ms":                "100ms to 1h",
		"s3://bucket?try_timeout=2h":                 "100ms to 1h",
		"s3://bucket?try_timeout=1s&try_timeout=2s":  "given 2 times",
		"file:///tmp/ck?try_timeout=1s":              "s3://, gs:// and az:// only",
		"s3://bucket?try_timeout=-1s&secret=hunter2": "100ms to 1h",
	} {
		_, err := reg.Open(ctx, raw)
		if !errors.Is(err, gateway.ErrInvalidURL) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "try_timeout") {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL naming try_timeout and %s", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) leaks a secret: %v", raw, err)
		}
	}
}
