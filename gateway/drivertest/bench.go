package drivertest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// benchKeys is how many log entries BenchPage lists: more than one
// service page (S3 and GCS answer 1,000 names), so a continuation that
// rescanned from the start would cost more than one request.
const benchKeys = 1100

// BenchPage measures what a continuation page costs on d: a directory of
// 1,100 log entries is listed 20 at a time from the middle, each page from
// the last one's Next, and the requests per page (counted by requests)
// are recorded as the summary row list_page_requests_<name> (goal <= 1:
// one page, not a rescan).
func BenchPage(b *testing.B, d gateway.Driver, name string, requests func() int64) {
	pd, ok := d.(gateway.PageDriver)
	if !ok {
		b.Fatalf("%T is no gateway.PageDriver", d)
	}
	ctx := context.Background()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range benchKeys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			put(b, d, fmt.Sprintf("bench/offsets/%05d", i), []byte("v1"))
		})
	}
	wg.Wait()
	b.ResetTimer()
	var pages, sent int64
	for b.Loop() {
		after := fmt.Sprintf("bench/offsets/%05d", benchKeys/2)
		for range 10 {
			before := requests()
			pg, err := pd.ListPage(ctx, "bench/offsets/", "/", after, 20)
			if err != nil {
				b.Fatal(err)
			}
			sent += requests() - before
			pages++
			if len(pg.Objects) != 20 || !pg.Truncated {
				b.Fatalf("a page after %s held %d keys (truncated %v), want 20 of more", after, len(pg.Objects), pg.Truncated)
			}
			after = pg.Next
		}
	}
	benchsum.Record(b, "list_page_requests_"+name, float64(sent)/float64(pages), "req/page", "<=1")
}
