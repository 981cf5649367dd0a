package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// Page sizes: rows of the fleet table and of the batch table per page.
const (
	FleetPageRows = 100
	BatchPageRows = 200
)

// fleetView is the fleet page.
type fleetView struct {
	Fleet   *Fleet
	Columns []struct{ Key, Head string }
	Rows    []Row
	Total   int // rows after filtering
	All     int // checkpoints
	Sort    string
	Desc    bool
	Q       string
	Status  string
	Page    int
	Pages   int
	Static  bool
	link    func(Row) string
}

// Link is the address of a row's checkpoint page.
func (v *fleetView) Link(r Row) string { return v.link(r) }

// SortLink is the address that sorts by key (flipping the direction when
// already sorted by it), keeping the filter.
func (v *fleetView) SortLink(key string) string {
	desc := false
	if v.Sort == key {
		desc = !v.Desc
	}
	return v.query(key, desc, 1)
}

// PageLink is the address of page p.
func (v *fleetView) PageLink(p int) string { return v.query(v.Sort, v.Desc, p) }

func (v *fleetView) query(sort string, desc bool, page int) string {
	q := url.Values{}
	q.Set("sort", sort)
	if desc {
		q.Set("dir", "desc")
	} else {
		q.Set("dir", "asc")
	}
	if v.Q != "" {
		q.Set("q", v.Q)
	}
	if v.Status != "" {
		q.Set("status", v.Status)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if v.Static {
		return "#" + q.Encode()
	}
	return "/?" + q.Encode()
}

// Arrow marks the column sorted by.
func (v *fleetView) Arrow(key string) string {
	if v.Sort != key {
		return ""
	}
	if v.Desc {
		return " ▼"
	}
	return " ▲"
}

func newFleetView(f *Fleet, q url.Values, static bool, link func(Row) string) *fleetView {
	v := &fleetView{Fleet: f, Columns: fleetColumns, Static: static, link: link,
		Sort: q.Get("sort"), Desc: q.Get("dir") == "desc", Q: q.Get("q"), Status: q.Get("status")}
	if !slices.ContainsFunc(fleetColumns, func(c struct{ Key, Head string }) bool { return c.Key == v.Sort }) {
		v.Sort = "path"
	}
	var rows []Row
	for i, c := range f.Checkpoints {
		rows = append(rows, rowOf(i+1, c, f.Now))
	}
	v.All = len(rows)
	if !static {
		rows = filterRows(rows, v.Q, v.Status)
	}
	sortRows(rows, v.Sort, v.Desc)
	v.Total = len(rows)
	v.Page, v.Pages, v.Rows = 1, 1, rows
	if !static {
		v.Page, v.Pages, v.Rows = page(rows, q.Get("page"), FleetPageRows)
	}
	return v
}

// page cuts rows to page p (1-based) of n rows.
func page[T any](rows []T, p string, n int) (int, int, []T) {
	pages := max(1, (len(rows)+n-1)/n)
	i, err := strconv.Atoi(p)
	if err != nil || i < 1 {
		i = 1
	}
	i = min(i, pages)
	lo, hi := (i-1)*n, min(len(rows), i*n)
	return i, pages, rows[lo:hi]
}

// batchRow is one line of the batch table.
type batchRow struct {
	ID        int64
	Time      string
	Watermark string
	Offsets   []string
	Committed bool
	InFlight  bool
	Findings  []string
}

// opRow is one line of the state-operator table.
type opRow struct {
	ID, Name, Store, Provider string
	Partitions                string
	MinVersion, MaxVersion    string
	Bytes                     int64
	Files                     int
}

// checkpointView is the checkpoint page.
type checkpointView struct {
	C        *Checkpoint
	Row      Row
	Charts   []*Chart
	Batches  []batchRow
	Ops      []opRow
	Findings []checkpoint.Finding
	Page     int
	Pages    int
	Static   bool
	Anchor   string // the page's id in a report
	self     string // its address, for paging
}

// PageLink is the address of batch page p.
func (v *checkpointView) PageLink(p int) string {
	return v.self + "&page=" + strconv.Itoa(p)
}

func newCheckpointView(c *Checkpoint, now time.Time, pageParam string, static bool, self string) *checkpointView {
	v := &checkpointView{C: c, Row: rowOf(0, *c, now), Static: static, self: self, Page: 1, Pages: 1}
	r := c.Report
	if r == nil {
		return v
	}
	v.Charts = charts(r)
	keyFindings := map[string][]string{}
	for _, f := range r.Findings {
		keyFindings[f.Key] = append(keyFindings[f.Key], f.ID)
	}
	prev := map[string]string{}
	rows := make([]batchRow, 0, len(r.Batches))
	for _, b := range r.Batches {
		br := batchRow{ID: b.ID, Time: b.Time, Committed: b.Committed,
			InFlight: !b.Committed && r.LatestOffsetsBatch != nil && b.ID == *r.LatestOffsetsBatch}
		if b.WatermarkMs != nil {
			br.Watermark = strconv.FormatInt(*b.WatermarkMs, 10)
		}
		for _, o := range b.Offsets {
			end := offsetShort(o.SourceOffset)
			start := prev[o.Source]
			if start == "" {
				start = "-"
			}
			br.Offsets = append(br.Offsets, fmt.Sprintf("%s: %s → %s", o.Source, start, end))
			prev[o.Source] = end
		}
		br.Findings = append(keyFindings[checkpoint.OffsetsKey(b.ID)], keyFindings[checkpoint.CommitKey(b.ID)]...)
		rows = append(rows, br)
	}
	slices.Reverse(rows) // the latest batch first
	if static {
		v.Batches = rows
	} else {
		v.Page, v.Pages, v.Batches = page(rows, pageParam, BatchPageRows)
	}
	for _, op := range r.Operators {
		for _, st := range op.Stores {
			lo, hi := int64(-1), int64(-1)
			var bytes int64
			files := 0
			for _, p := range st.Partitions {
				for _, rg := range p.Versions {
					if lo < 0 || rg[0] < lo {
						lo = rg[0]
					}
					hi = max(hi, rg[1])
				}
				bytes += p.Bytes
				files += p.Files
			}
			v.Ops = append(v.Ops, opRow{ID: op.ID, Name: op.Name, Store: st.Name, Provider: op.Provider,
				Partitions: fmt.Sprintf("%d/%d", len(st.Partitions), op.NumPartitions),
				MinVersion: optText(lo), MaxVersion: optText(hi), Bytes: bytes, Files: files})
		}
		if len(op.Stores) == 0 {
			v.Ops = append(v.Ops, opRow{ID: op.ID, Name: op.Name, Store: "-", Provider: op.Provider,
				Partitions: fmt.Sprintf("0/%d", op.NumPartitions), MinVersion: "-", MaxVersion: "-", Bytes: op.Bytes, Files: op.Files})
		}
	}
	v.Findings = r.Findings
	return v
}

func optText(v int64) string {
	if v < 0 {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

// offsetShort is a source offset in a table cell.
func offsetShort(o checkpoint.SourceOffset) string {
	switch o.Kind {
	case checkpoint.OffsetNone:
		return "-"
	case checkpoint.OffsetKafka:
		var b strings.Builder
		for i, p := range o.Kafka {
			if i == 0 || o.Kafka[i-1].Topic != p.Topic {
				if i > 0 {
					b.WriteString("] ")
				}
				fmt.Fprintf(&b, "%s[%d=%d", p.Topic, p.Partition, p.Offset)
			} else {
				fmt.Fprintf(&b, " %d=%d", p.Partition, p.Offset)
			}
		}
		if len(o.Kafka) > 0 {
			b.WriteString("]")
		}
		return b.String()
	case checkpoint.OffsetFile:
		if o.LogOffset != nil {
			return "log " + strconv.FormatInt(*o.LogOffset, 10)
		}
	case checkpoint.OffsetLong:
		if o.Value != nil {
			return strconv.FormatInt(*o.Value, 10)
		}
	case checkpoint.OffsetRate:
		if pos, _, ok := checkpoint.OffsetPosition(o); ok {
			return "rate " + strconv.FormatInt(pos, 10)
		}
	}
	if pos, kind, ok := checkpoint.OffsetPosition(o); ok {
		return kind + " " + strconv.FormatInt(pos, 10)
	}
	j := o.JSON
	if len(j) > 60 {
		j = j[:57] + "..."
	}
	return j
}
