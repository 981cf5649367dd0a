package s3serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
)

// countingStore counts how the front door reaches the store: whole-object
// streams, ranged reads, listing entries read (List) and pages, copies.
type countingStore struct {
	gateway.Store
	mu      sync.Mutex
	streams map[string]int
	ranges  []string
	listed  int // entries read through List
	lists   int // List calls
	pages   int
	copies  int
}

func newCounting(s gateway.Store) *countingStore {
	return &countingStore{Store: s, streams: map[string]int{}}
}

func (c *countingStore) Unwrap() gateway.Store { return c.Store }

func (c *countingStore) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	c.mu.Lock()
	c.streams[key]++
	c.mu.Unlock()
	return c.Store.GetStream(ctx, key)
}

func (c *countingStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	c.mu.Lock()
	c.ranges = append(c.ranges, fmt.Sprintf("%s %d %d", key, off, n))
	c.mu.Unlock()
	return gateway.GetRange(ctx, c.Store, key, off, n)
}

func (c *countingStore) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		c.mu.Lock()
		c.lists++
		c.mu.Unlock()
		for a, err := range c.Store.List(ctx, prefix) {
			c.mu.Lock()
			c.listed++
			c.mu.Unlock()
			if !yield(a, err) {
				return
			}
		}
	}
}

func (c *countingStore) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	c.mu.Lock()
	c.pages++
	c.mu.Unlock()
	return gateway.ListPage(ctx, c.Store, prefix, delim, after, max)
}

func (c *countingStore) Copy(ctx context.Context, src, dst string, v gateway.Version, cond gateway.Cond) (gateway.Version, error) {
	c.mu.Lock()
	c.copies++
	c.mu.Unlock()
	return gateway.Copy(ctx, c.Store, src, dst, v, cond)
}

func (c *countingStore) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.streams)
	c.ranges, c.listed, c.lists, c.pages, c.copies = nil, 0, 0, 0, 0
}

// TestServeRangeReadsTheRange: a GET with a Range reads the range from
// the store (a ranged read from its first byte), never the bytes before
// it; suffix, open-ended and unsatisfiable ranges answer as S3 does.
func TestServeRangeReadsTheRange(t *testing.T) {
	var cs *countingStore
	ep, _ := serveWrapped(t, func(s gateway.Store) gateway.Store { cs = newCounting(s); return cs })
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i % 251)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("data/part-0.parquet"), Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	for _, tc := range []struct {
		rng        string
		from, to   int64 // inclusive
		ranged     string
		wholeReads int
	}{
		{"bytes=1000000-1000099", 1000000, 1000099, "ckpt/data/part-0.parquet 1000000 100", 0},
		{"bytes=1048000-", 1048000, size - 1, "ckpt/data/part-0.parquet 1048000 -1", 0},
		{"bytes=1048500-2000000", 1048500, size - 1, "ckpt/data/part-0.parquet 1048500 951501", 0},
		{"bytes=-8", size - 8, size - 1, "ckpt/data/part-0.parquet 1048568 -1", 1},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			cs.reset()
			g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("data/part-0.parquet"), Range: aws.String(tc.rng)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil || !bytes.Equal(got, data[tc.from:tc.to+1]) {
				t.Fatalf("range %s: %d bytes (%v), want %d", tc.rng, len(got), err, tc.to-tc.from+1)
			}
			if cr := fmt.Sprintf("bytes %d-%d/%d", tc.from, tc.to, size); aws.ToString(g.ContentRange) != cr {
				t.Errorf("Content-Range %q, want %q", aws.ToString(g.ContentRange), cr)
			}
			if len(cs.ranges) == 0 || cs.ranges[len(cs.ranges)-1] != tc.ranged {
				t.Errorf("store ranged reads %q, want one ending with %q", cs.ranges, tc.ranged)
			}
			if n := cs.streams["ckpt/data/part-0.parquet"]; n != tc.wholeReads {
				t.Errorf("%d whole-object streams of the key, want %d", n, tc.wholeReads)
			}
		})
	}
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("data/part-0.parquet"), Range: aws.String("bytes=2000000-")})
	if status(err) != 416 {
		t.Fatalf("a range past the end: %v, want 416", err)
	}

	// UploadPartCopy with a source range reads the range only, too.
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String("data/tail")})
	if err != nil {
		t.Fatal(err)
	}
	cs.reset()
	if _, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("ckpt"), Key: aws.String("data/tail"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("ckpt/data/part-0.parquet"), CopySourceRange: aws.String("bytes=1000000-1048575")}); err != nil {
		t.Fatalf("upload part copy: %v", err)
	}
	if len(cs.ranges) != 1 || cs.ranges[0] != "ckpt/data/part-0.parquet 1000000 48576" || cs.streams["ckpt/data/part-0.parquet"] != 0 {
		t.Fatalf("upload part copy: ranged reads %q and %d whole streams of the source", cs.ranges, cs.streams["ckpt/data/part-0.parquet"])
	}
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String("data/tail"), UploadId: up.UploadId}); err != nil {
		t.Fatal(err)
	}
}

// TestServeListPagesAPageAtATime: listing 2,500 keys 1,000 at a time reads
// one store page per S3 page (no rescan of what came before), and hidden
// keys filtered out of a page are made up from the next one, so max-keys
// is honoured.
func TestServeListPagesAPageAtATime(t *testing.T) {
	var cs *countingStore
	ep, dir := serveWrapped(t, func(s gateway.Store) gateway.Store { cs = newCounting(s); return cs })
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	const n = 2500
	if err := os.MkdirAll(filepath.Join(dir, "ckpt", "many"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "ckpt", "many", fmt.Sprintf("%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs.reset()
	var keys []string
	requests := 0
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt"), Prefix: aws.String("many/")})
	for p.HasMorePages() {
		pg, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		requests++
		if len(pg.Contents) > 1000 {
			t.Fatalf("a page of %d keys", len(pg.Contents))
		}
		for _, o := range pg.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	if len(keys) != n || keys[0] != "many/0000" || keys[n-1] != fmt.Sprintf("many/%04d", n-1) {
		t.Fatalf("%d keys (%q ... %q), want %d", len(keys), keys[0], keys[len(keys)-1], n)
	}
	if cs.pages != requests || cs.listed > 2*requests {
		t.Errorf("%d S3 pages took %d store pages and %d entries read by List; want one page each and no rescans", requests, cs.pages, cs.listed)
	}

	// A new bucket holds its hidden marker (_ckgate/bucket), which sorts
	// between README and a: a page of two still holds two keys.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("second")}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"README", "a", "b"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("second"), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("second"), MaxKeys: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	if got := objectKeys(l.Contents); got != "[README a]" || !aws.ToBool(l.IsTruncated) {
		t.Fatalf("page of 2 = %s truncated=%v, want [README a] truncated", got, aws.ToBool(l.IsTruncated))
	}
	l, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("second"), MaxKeys: aws.Int32(2), ContinuationToken: l.NextContinuationToken})
	if err != nil || objectKeys(l.Contents) != "[b]" || aws.ToBool(l.IsTruncated) {
		t.Fatalf("page 2 = %s, %v", objectKeys(l.Contents), err)
	}
	l, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("second"), Delimiter: aws.String("/")})
	if err != nil || objectKeys(l.Contents) != "[README a b]" || len(l.CommonPrefixes) != 0 {
		t.Fatalf("with a delimiter: %s and %d prefixes (%v): ckgate's own directory must stay hidden", objectKeys(l.Contents), len(l.CommonPrefixes), err)
	}
}

func objectKeys(os []types.Object) string {
	ks := make([]string, len(os))
	for i, o := range os {
		ks[i] = aws.ToString(o.Key)
	}
	return fmt.Sprint(ks)
}

// TestServeDirectoryMarkers: a key ending in '/' (Hadoop's mkdirs) is
// stored as a directory marker (gateway.DirMarkerKey) and answered under
// the client's name by PUT, HEAD, GET, LIST and DELETE; deleting it leaves
// the directory's keys; the marker's store name is refused to clients.
func TestServeDirectoryMarkers(t *testing.T) {
	ep, dir := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	b := aws.String("ckpt")
	for _, k := range []string{"data/dir/", "data/dir/sub/"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader("")}); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/dir/x"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "data", "dir", gateway.DirMarkerName)); err != nil {
		t.Fatalf("the marker is not stored as %s: %v", gateway.DirMarkerKey("data/dir"), err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("data/dir/")})
	if err != nil || aws.ToInt64(h.ContentLength) != 0 {
		t.Fatalf("head of the marker: %+v, %v", h, err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("data/dir/")})
	if err != nil {
		t.Fatalf("get of the marker: %v", err)
	}
	g.Body.Close()
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("data/dir/"), Delimiter: aws.String("/")})
	if err != nil || objectKeys(l.Contents) != "[data/dir/ data/dir/x]" || len(l.CommonPrefixes) != 1 || aws.ToString(l.CommonPrefixes[0].Prefix) != "data/dir/sub/" {
		t.Fatalf("list data/dir/ = %s %d prefixes, %v", objectKeys(l.Contents), len(l.CommonPrefixes), err)
	}
	l, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("data/")})
	if err != nil || objectKeys(l.Contents) != "[data/dir/ data/dir/sub/ data/dir/x]" {
		t.Fatalf("list data/ = %s, %v", objectKeys(l.Contents), err)
	}
	// Paging one key at a time, V1 markers and V2 tokens alike, continues
	// after a marker's client name.
	var v1, v2 []string
	marker, token := "", (*string)(nil)
	for range 5 {
		l1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b, Prefix: aws.String("data/"), MaxKeys: aws.Int32(1), Marker: aws.String(marker)})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l1.Contents {
			v1 = append(v1, aws.ToString(o.Key))
			marker = aws.ToString(o.Key)
		}
		l2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("data/"), MaxKeys: aws.Int32(1), ContinuationToken: token})
		if err != nil {
			t.Fatal(err)
		}
		v2 = append(v2, strings.Trim(objectKeys(l2.Contents), "[]"))
		token = l2.NextContinuationToken
		if !aws.ToBool(l1.IsTruncated) && token == nil {
			break
		}
	}
	if fmt.Sprint(v1) != "[data/dir/ data/dir/sub/ data/dir/x]" || fmt.Sprint(v2) != "[data/dir/ data/dir/sub/ data/dir/x]" {
		t.Fatalf("paged by one: V1 %q, V2 %q", v1, v2)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(gateway.DirMarkerKey("data/dir")), Body: strings.NewReader("")}); status(err) != 403 {
		t.Fatalf("put of the marker's store name: %v, want 403", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(gateway.DirMarkerKey("data/dir"))}); status(err) != 404 {
		t.Fatalf("head of the marker's store name: %v, want 404", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("data/dir/")}); err != nil {
		t.Fatalf("delete of the marker: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("data/dir/")}); status(err) != 404 {
		t.Fatalf("head of the deleted marker: %v, want 404", err)
	}
	if g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("data/dir/x")}); err != nil {
		t.Fatalf("data/dir/x after deleting the marker: %v", err)
	} else {
		g.Body.Close()
	}
}

// TestServeCopyIsOneStoreCopy: CopyObject is one store copy through the
// guard (server-side where the backend has one), with the destination's
// condition (a log entry is create-only) and CopySourceIfMatch as the
// source version.
func TestServeCopyIsOneStoreCopy(t *testing.T) {
	var cs *countingStore
	ep, _ := serveWrapped(t, func(s gateway.Store) gateway.Store { cs = newCounting(s); return cs })
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	b := aws.String("ckpt")
	p, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/.a.tmp"), Body: strings.NewReader("first")})
	if err != nil {
		t.Fatal(err)
	}
	cs.reset()
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("data/a"), CopySource: aws.String("ckpt/data/.a.tmp"), CopySourceIfMatch: p.ETag}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	if cs.copies != 1 || cs.streams["ckpt/data/.a.tmp"] != 0 {
		t.Fatalf("%d store copies and %d streams of the source, want one copy and no stream", cs.copies, cs.streams["ckpt/data/.a.tmp"])
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/.a.tmp"), Body: strings.NewReader("second")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("data/b"), CopySource: aws.String("ckpt/data/.a.tmp"), CopySourceIfMatch: p.ETag}); status(err) != 412 {
		t.Fatalf("copy with a stale CopySourceIfMatch: %v, want 412", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("data/b")}); status(err) != 404 {
		t.Fatalf("a refused copy wrote data/b: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("data/b"), CopySource: aws.String("ckpt/data/none")}); status(err) != 404 {
		t.Fatalf("copy of an absent source: %v, want 404", err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("data/a")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if string(got) != "first" {
		t.Fatalf("data/a = %q", got)
	}
}
