package s3store

import (
	"context"
	"iter"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
)

// Listing fans out: S3 pages a listing one request after another (1,000
// keys each), so a checkpoint's 30,000 keys cost 30 round trips in a row.
// List asks first for the level below the prefix with a delimiter; when
// that one answer holds the whole level and names at most listFanout
// directories, the directories are listed concurrently (listWorkers at a
// time, each at most listAhead pages ahead of the reader) and their keys
// yielded in order between the level's own keys. Otherwise it lists flat.
const (
	listFanout  = 64
	listWorkers = 8
	listAhead   = 8
)

// List yields the keys under prefix in lexical order.
func (s *driver) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		full := prefix
		var t tracker
		level, err := s.client.ListObjectsV2(ctx, s.listInput(full, "/"), t.option)
		if err != nil {
			yield(gateway.Attrs{}, fail("list", prefix, err))
			return
		}
		if aws.ToBool(level.IsTruncated) || len(level.CommonPrefixes) > listFanout {
			s.listFlat(ctx, full, prefix, yield)
			return
		}
		s.listLevel(ctx, prefix, level, yield)
	}
}

func (s *driver) listInput(full, delimiter string) *s3.ListObjectsV2Input {
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket}
	if full != "" {
		in.Prefix = aws.String(full)
	}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	return in
}

// listFlat pages through every key under full, in order.
func (s *driver) listFlat(ctx context.Context, full, prefix string, yield func(gateway.Attrs, error) bool) {
	pages := s3.NewListObjectsV2Paginator(s.client, s.listInput(full, ""))
	for pages.HasMorePages() {
		var t tracker
		page, err := pages.NextPage(ctx, t.option)
		if err != nil {
			yield(gateway.Attrs{}, fail("list", prefix, err))
			return
		}
		for _, a := range s.attrs(page.Contents) {
			if !yield(a, nil) {
				return
			}
		}
	}
}

// page is one page of a directory's listing, or the error that ended it.
type page struct {
	attrs []gateway.Attrs
	err   error
}

// listLevel yields level's keys and, in their place in the order, the keys
// of its directories, listed concurrently.
func (s *driver) listLevel(ctx context.Context, prefix string, level *s3.ListObjectsV2Output, yield func(gateway.Attrs, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	dirs := make([]string, len(level.CommonPrefixes))
	pages := make([]chan page, len(dirs))
	for i, cp := range level.CommonPrefixes {
		dirs[i], pages[i] = aws.ToString(cp.Prefix), make(chan page, listAhead)
	}
	wg.Go(func() {
		sem := make(chan struct{}, listWorkers)
		for i, dir := range dirs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				s.listDir(ctx, dir, prefix, pages[i])
			})
		}
	})

	keys := s.attrs(level.Contents)
	for i, dir := range dirs {
		// the level's keys that sort before the directory come first
		for len(keys) > 0 && keys[0].Key < dir {
			if !yield(keys[0], nil) {
				return
			}
			keys = keys[1:]
		}
		for {
			var p page
			var ok bool
			select {
			case p, ok = <-pages[i]:
			case <-ctx.Done():
				yield(gateway.Attrs{}, fail("list", prefix, ctx.Err()))
				return
			}
			if !ok {
				break
			}
			if p.err != nil {
				yield(gateway.Attrs{}, p.err)
				return
			}
			for _, a := range p.attrs {
				if !yield(a, nil) {
					return
				}
			}
		}
	}
	for _, a := range keys {
		if !yield(a, nil) {
			return
		}
	}
}

// listDir sends the pages of every key under dir to out, then closes it.
func (s *driver) listDir(ctx context.Context, dir, prefix string, out chan<- page) {
	defer close(out)
	pages := s3.NewListObjectsV2Paginator(s.client, s.listInput(dir, ""))
	for pages.HasMorePages() {
		var t tracker
		res, err := pages.NextPage(ctx, t.option)
		p := page{err: err}
		if err != nil {
			p.err = fail("list", prefix, err)
		} else {
			p.attrs = s.attrs(res.Contents)
		}
		select {
		case out <- p:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// attrs converts listed objects, leaving out directory markers (keys
// ending in '/') and keys outside the store's prefix.
func (s *driver) attrs(objs []types.Object) []gateway.Attrs {
	out := make([]gateway.Attrs, 0, len(objs))
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if strings.HasSuffix(k, "/") {
			continue
		}
		out = append(out, gateway.Attrs{
			Key:      k,
			Size:     aws.ToInt64(o.Size),
			Version:  version(o.ETag),
			Modified: aws.ToTime(o.LastModified),
		})
	}
	return out
}
