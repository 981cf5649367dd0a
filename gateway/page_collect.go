package gateway

import (
	"slices"
	"strings"
)

// PageCollector assembles one Page (see PageDriver) from what a service
// lists, for a driver whose service starts a listing at a name but whose
// start point, order or grouping may differ from the contract's: it takes
// entries in any order, drops those that do not sort after after (an
// object's key, or the common prefix it is grouped under), groups
// objects by the delimiter (so a flat listing serves as well as a grouped
// one), counts objects and common prefixes together and cuts the page at max
// in byte order.
//
// An object whose name ends in '/' is a directory marker (written by the
// cloud consoles and Hadoop's mkdirs), no key: it is left out, as List
// leaves it out, and only moves Next on.
type PageCollector struct {
	prefix, delim, after string
	max                  int

	objects  []Attrs
	prefixes map[string]bool
	last     string // the greatest name seen, kept or not
}

// NewPageCollector returns the collector of the page of at most max
// entries under prefix, after after, grouped by delim ("" for none).
func NewPageCollector(prefix, delim, after string, max int) *PageCollector {
	return &PageCollector{prefix: prefix, delim: delim, after: after, max: max, prefixes: map[string]bool{}}
}

// Start is the name, inclusive, a service may start listing at: no entry
// of the page sorts before it (in byte order), and it goes no deeper than
// one level below prefix when delim is set (Azure's startFrom takes no
// more in a hierarchical listing). It is "" for a listing from the start. When
// after is a common prefix (the Next of a page that ended on one) or a
// name inside one, Start is the first name past that group, so that the
// group is not listed again, when that name can be spelled by raising its
// last byte (an ASCII delimiter); otherwise it is the group, which is then
// listed again and dropped.
func (p *PageCollector) Start() string {
	if p.after == "" || p.after < p.prefix {
		return ""
	}
	if p.Past() {
		return p.after // the page is empty
	}
	if cp := p.group(p.after); cp != "" {
		if last := cp[len(cp)-1]; last < 0x7e {
			return cp[:len(cp)-1] + string(rune(last+1))
		}
		return cp
	}
	return p.after
}

// Past reports whether after sorts past every name under prefix (it is
// greater and does not start with it): the page is empty, and a driver
// returns it without asking its service.
func (p *PageCollector) Past() bool {
	return p.after > p.prefix && !strings.HasPrefix(p.after, p.prefix)
}

// Skips reports whether the entry name (an object's key or a common
// prefix) is left out: it sorts at or before after. A common prefix that
// holds after, or is after, sorts so: its names after after are not
// listed again, as S3 leaves them out.
func (p *PageCollector) Skips(name string) bool { return name <= p.after }

// group returns the common prefix name falls in (prefix up to and
// including the first delim after it), or "" when it falls in none.
func (p *PageCollector) group(name string) string {
	if p.delim == "" || !strings.HasPrefix(name, p.prefix) {
		return ""
	}
	rel := name[len(p.prefix):]
	i := strings.Index(rel, p.delim)
	if i < 0 {
		return ""
	}
	return p.prefix + rel[:i+len(p.delim)]
}

func (p *PageCollector) seen(name string) {
	if name > p.last {
		p.last = name
	}
}

// Object adds a listed object (a.Key its full name); it is grouped when
// delim falls in its name after prefix.
func (p *PageCollector) Object(a Attrs) {
	p.seen(a.Key)
	if !strings.HasPrefix(a.Key, p.prefix) {
		return
	}
	if cp := p.group(a.Key); cp != "" {
		p.Prefix(cp)
		return
	}
	if p.Skips(a.Key) || strings.HasSuffix(a.Key, "/") {
		return
	}
	p.objects = append(p.objects, a)
}

// Prefix adds a common prefix the service grouped itself.
func (p *PageCollector) Prefix(cp string) {
	p.seen(cp)
	if strings.HasPrefix(cp, p.prefix) && !p.Skips(cp) {
		p.prefixes[cp] = true
	}
}

// Len is the number of entries kept so far.
func (p *PageCollector) Len() int { return len(p.objects) + len(p.prefixes) }

// Full reports whether more than max entries are kept: the page is
// complete and known to be truncated.
func (p *PageCollector) Full() bool { return p.Len() > p.max }

// End returns the name the page would end on now: its max-th entry in
// byte order, or its last when fewer are kept ("" when none is).
func (p *PageCollector) End() string {
	names := make([]string, 0, p.Len())
	for _, a := range p.objects {
		names = append(names, a.Key)
	}
	for cp := range p.prefixes {
		names = append(names, cp)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[min(p.max, len(names))-1]
}

// Page returns the first max entries in byte order. more says whether the
// service has entries past those it listed; the page is truncated then, or
// when more than max entries were kept. Next is the page's last name, or,
// for a page that kept nothing although more follows, the last name seen.
func (p *PageCollector) Page(more bool) Page {
	type entry struct {
		name string
		obj  int // index in objects, or -1 for a common prefix
	}
	all := make([]entry, 0, p.Len())
	for i, a := range p.objects {
		all = append(all, entry{a.Key, i})
	}
	for cp := range p.prefixes {
		all = append(all, entry{cp, -1})
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var pg Page
	if len(all) > p.max {
		all, more = all[:p.max], true
	}
	for _, e := range all {
		if e.obj < 0 {
			pg.Prefixes = append(pg.Prefixes, e.name)
		} else {
			pg.Objects = append(pg.Objects, p.objects[e.obj])
		}
	}
	if more {
		pg.Truncated = true
		pg.Next = p.last
		if len(all) > 0 {
			pg.Next = all[len(all)-1].name
		}
	}
	return pg
}
