package azstore

import (
	"context"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.PageDriver = (*driver)(nil)

// ListPage lists one page with one List Blobs request (hierarchical with
// the delimiter, flat without), starting at the page's first possible
// name with startFrom (inclusive; service version 2026-02-06, which the
// SDK sends) and asking for max+2 entries (blobs and prefixes count
// together; after itself may come back). The service orders names in
// UTF-16, which differs from byte order only among names holding a
// character at or above U+D800, and compares startFrom so too: startFrom
// is cut before such a character, and a page that would end on such a
// name lists on until the answers are past every name that shares its
// beginning up to that character (see settled). Cost: one request a page,
// more only for answers that hold nothing for the page
// (directory markers) or end on such a name. max is capped at 4,998.
func (s *driver) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	max = min(max, listPageSize-2)
	pc := gateway.NewPageCollector(prefix, delim, after, max)
	if pc.Past() {
		return pc.Page(false), nil
	}
	start := utf16Start(pc.Start())
	n := to.Ptr(int32(max + 2))
	var marker *string
	for {
		var items []*container.BlobItem
		var prefixes []*container.BlobPrefix
		var next *string
		if delim == "" {
			opts := &container.ListBlobsFlatOptions{MaxResults: n, Marker: marker}
			opts.Prefix, opts.StartFrom = optional(prefix), optional(start)
			page, err := s.client.NewListBlobsFlatPager(opts).NextPage(ctx)
			if err != nil {
				return gateway.Page{}, e("list", prefix, err)
			}
			items, next = page.Segment.BlobItems, page.NextMarker
		} else {
			opts := &container.ListBlobsHierarchyOptions{MaxResults: n, Marker: marker}
			opts.Prefix, opts.StartFrom = optional(prefix), optional(start)
			page, err := s.client.NewListBlobsHierarchyPager(delim, opts).NextPage(ctx)
			if err != nil {
				return gateway.Page{}, e("list", prefix, err)
			}
			items, prefixes, next = page.Segment.BlobItems, page.Segment.BlobPrefixes, page.NextMarker
		}
		var last []string // the answer's last names, in the service's order
		if len(items) > 0 {
			last = append(last, deref(items[len(items)-1].Name))
		}
		if len(prefixes) > 0 {
			last = append(last, deref(prefixes[len(prefixes)-1].Name))
		}
		for _, it := range items {
			name := deref(it.Name)
			a := gateway.Attrs{Key: name}
			if p := it.Properties; p != nil {
				a.Size = deref(p.ContentLength)
				a.Version = version(p.ETag)
				a.Modified = deref(p.LastModified)
			}
			pc.Object(a)
		}
		for _, p := range prefixes {
			pc.Prefix(deref(p.Name))
		}
		more := deref(next) != ""
		if end := pc.End(); !more || end != "" && settled(prefix, end, last) {
			return pc.Page(more), nil
		}
		marker = next
	}
}

// settled reports whether no name a later answer holds can sort before
// end in byte order. Every such name sorts after the answer's last names
// in UTF-16; the two orders disagree only between names that share a
// beginning up to a character at or above U+D800. So it holds when end has
// no such character after prefix, or when the answer already went past
// every name sharing end's beginning up to the first one.
func settled(prefix, end string, last []string) bool {
	k := strings.IndexFunc(end[len(prefix):], func(r rune) bool { return r >= 0xD800 })
	if k < 0 {
		return true
	}
	block := end[:len(prefix)+k]
	for _, l := range last {
		if strings.HasPrefix(l, block) {
			return false
		}
	}
	return true
}

// utf16Start cuts a start name before its first character whose UTF-16
// order differs from its byte order: every name after the whole name in
// byte order sorts at or after the cut one in UTF-16 too.
func utf16Start(name string) string {
	for i, r := range name {
		if r >= 0xD800 {
			return name[:i]
		}
	}
	return name
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
