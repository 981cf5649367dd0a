package gcsstore

import (
	"context"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.PageDriver = (*driver)(nil)

// ListPage lists one page with one objects.list request (prefix,
// delimiter, startOffset, maxResults = max+1, which GCS counts over items
// and prefixes together); the whole answer is read, since it holds items
// before prefixes, and an entry past max says the page is truncated.
// startOffset is inclusive: it is after followed by NUL (the first name
// past it; keys hold no NUL), or, when after is a common prefix or a name
// inside one, the first name past that group (a common prefix that does
// not sort after after is left out). Only an answer that holds nothing for the
// page (directory markers) is followed by the next one. max is capped at
// 999.
func (d *driver) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	max = min(max, listPageSize-1)
	pc := gateway.NewPageCollector(prefix, delim, after, max)
	if pc.Past() {
		return pc.Page(false), nil
	}
	start := pc.Start()
	if start != "" && start == after {
		start += "\x00"
	}
	q := &storage.Query{Prefix: prefix, Delimiter: delim, StartOffset: start}
	token := ""
	for {
		entries, next, err := d.listOnce(ctx, q, max+1, token)
		if err != nil {
			return gateway.Page{}, err
		}
		for _, a := range entries {
			if a.Prefix != "" {
				pc.Prefix(a.Prefix)
				continue
			}
			pc.Object(gateway.Attrs{Key: a.Name, Size: a.Size, Version: version(a.Generation), Modified: a.Updated})
		}
		if pc.Len() > 0 || next == "" {
			return pc.Page(next != ""), nil
		}
		token = next
	}
}

// listOnce sends one objects.list request of q for n entries from token,
// returning them and the next page's token ("" at the end).
func (d *driver) listOnce(ctx context.Context, q *storage.Query, n int, token string) ([]*storage.ObjectAttrs, string, error) {
	if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated"}); err != nil {
		return nil, "", gateway.E("list", q.Prefix, gateway.ErrUnsupported, err)
	}
	var entries []*storage.ObjectAttrs
	next, err := iterator.NewPager(d.bucket.Objects(ctx, q), n, token).NextPage(&entries)
	if err != nil {
		return nil, "", named(ctx, err)
	}
	return entries, next, nil
}
