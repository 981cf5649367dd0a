package gateway

import "strings"

// PageBuilder builds one listing page (see ListPage) from keys given in
// byte order: the fallback of every Store, and the page of a driver that
// walks its keys in order (memstore, filestore). Skips and SkipsDir let a
// walker pass over what the page cannot hold without reading it.
type PageBuilder struct {
	prefix, delim, after string
	max, n               int
	last                 string // the last entry added
	page                 Page
	full                 bool
}

// NewPageBuilder starts the page of prefix, delim, after and max (> 0).
func NewPageBuilder(prefix, delim, after string, max int) *PageBuilder {
	return &PageBuilder{prefix: prefix, delim: delim, after: after, max: max}
}

// entry returns the name key is reported under: its common prefix when it
// has delim after the prefix, else itself.
func (p *PageBuilder) entry(key string) (string, bool) {
	if p.delim != "" && strings.HasPrefix(key, p.prefix) {
		if i := strings.Index(key[len(p.prefix):], p.delim); i >= 0 {
			return key[:len(p.prefix)+i+len(p.delim)], true
		}
	}
	return key, false
}

// Skips reports whether key (starting with the prefix) adds nothing to the
// page: its entry sorts at or before after, or is the common prefix
// already added.
func (p *PageBuilder) Skips(key string) bool {
	e, isPrefix := p.entry(key)
	return e <= p.after || isPrefix && e == p.last
}

// SkipsDir reports whether no key that starts with dir (a directory of a
// walk, ending in '/') can add to the page: all of them sort before
// after, or they share a common prefix already added or at or before
// after.
func (p *PageBuilder) SkipsDir(dir string) bool {
	if dir < p.after && !strings.HasPrefix(p.after, dir) {
		return true
	}
	if len(dir) > len(p.prefix) {
		if e, isPrefix := p.entry(dir); isPrefix && len(e) <= len(dir) {
			return e <= p.after || e == p.last
		}
	}
	return false
}

// Add adds the object a (keys in byte order; skipped ones are ignored) and
// reports whether the page takes more: false once an entry past the page
// was seen (the page is then truncated).
func (p *PageBuilder) Add(a Attrs) bool {
	if p.full {
		return false
	}
	if p.Skips(a.Key) {
		return true
	}
	e, isPrefix := p.entry(a.Key)
	if p.n == p.max {
		p.full = true
		p.page.Truncated, p.page.Next = true, p.last
		return false
	}
	p.n++
	p.last = e
	if isPrefix {
		p.page.Prefixes = append(p.page.Prefixes, e)
	} else {
		p.page.Objects = append(p.page.Objects, a)
	}
	return true
}

// Page returns the page built.
func (p *PageBuilder) Page() Page { return p.page }
