package ui

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/policy"
)

// Row is one checkpoint in the fleet table.
type Row struct {
	Index       int
	URL         string
	QueryID     string
	Engine      string
	Status      string // inspect's status, or "unreadable"
	LastOffsets *int64
	LastCommit  *int64
	CommitAge   *time.Duration
	WatermarkMs *int64
	GapMs       *int64
	Operators   int
	StateBytes  int64 // at the latest version (its decoded files)
	Errors      int
	Warnings    int
	Infos       int
	Audit       []policy.Finding
	Err         string
	Gap         []Point
	Lane        []checkpoint.Batch
}

// FindingsText is "E/W/I".
func (r Row) FindingsText() string { return fmt.Sprintf("%d/%d/%d", r.Errors, r.Warnings, r.Infos) }

// Spark draws the gap sparkline.
func (r Row) Spark() template.HTML {
	return Sparkline(fmt.Sprintf("spark-%d", r.Index), "watermark gap of the latest batches of "+r.URL, r.Gap)
}

func rowOf(i int, c Checkpoint, now time.Time) Row {
	row := Row{Index: i, URL: c.URL, Audit: c.Audit, Err: c.Err, Status: "unreadable"}
	r := c.Report
	if r == nil {
		return row
	}
	row.QueryID, row.Engine, row.Status = r.QueryID, r.Writer.Kind, string(r.Status)
	row.LastOffsets, row.LastCommit, row.WatermarkMs = r.LatestOffsetsBatch, r.LatestCommitBatch, r.WatermarkMs
	row.Operators = len(r.Operators)
	row.Gap = GapPoints(r.Batches)
	if n := len(row.Gap); n > 0 {
		g := int64(row.Gap[n-1].Y)
		row.GapMs = &g // of the latest batch that has a watermark (Spark's rule: 0 is none)
	}
	row.Lane = r.Batches
	for i := len(r.Batches) - 1; i >= 0; i-- {
		b := r.Batches[i]
		if r.LatestCommitBatch != nil && b.ID == *r.LatestCommitBatch && b.CommitWrittenMs != nil && row.CommitAge == nil {
			a := now.Sub(time.UnixMilli(*b.CommitWrittenMs)).Round(time.Second)
			row.CommitAge = &a
		}
	}
	for _, op := range r.Operators {
		for _, st := range op.Stores {
			for _, p := range st.Partitions {
				for _, d := range p.Details {
					if d.Version == p.LatestVersion {
						row.StateBytes += d.Bytes
					}
				}
			}
		}
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case checkpoint.SeverityError:
			row.Errors++
		case checkpoint.SeverityWarning:
			row.Warnings++
		default:
			row.Infos++
		}
	}
	return row
}

// Columns of the fleet table: name (the sort key in URLs) and heading.
var fleetColumns = []struct{ Key, Head string }{
	{"path", "Checkpoint"}, {"query", "Query id"}, {"engine", "Engine"}, {"status", "Status"},
	{"offsets", "Last offsets"}, {"commit", "Last commit"}, {"age", "Commit age"},
	{"watermark", "Watermark"}, {"gap", "Watermark gap"}, {"ops", "Stateful ops"},
	{"state", "State bytes (latest)"}, {"findings", "Findings E/W/I"}, {"audit", "Audit"}, {"trend", "Gap trend"},
}

var statusRank = map[string]int{"inconsistent": 0, "unreadable": 1, "in_flight": 2, "empty": 3, "clean": 4}

func optCmp(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

func durOpt(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	v := int64(*d)
	return &v
}

// sortRows sorts by column key (unknown keys: path), descending when desc.
func sortRows(rows []Row, key string, desc bool) {
	f := func(a, b Row) int {
		switch key {
		case "query":
			return strings.Compare(a.QueryID, b.QueryID)
		case "engine":
			return strings.Compare(a.Engine, b.Engine)
		case "status":
			return cmp.Compare(statusRank[a.Status], statusRank[b.Status])
		case "offsets":
			return optCmp(a.LastOffsets, b.LastOffsets)
		case "commit":
			return optCmp(a.LastCommit, b.LastCommit)
		case "age":
			return optCmp(durOpt(a.CommitAge), durOpt(b.CommitAge))
		case "watermark":
			return optCmp(a.WatermarkMs, b.WatermarkMs)
		case "gap", "trend":
			return optCmp(a.GapMs, b.GapMs)
		case "ops":
			return cmp.Compare(a.Operators, b.Operators)
		case "state":
			return cmp.Compare(a.StateBytes, b.StateBytes)
		case "findings":
			return cmp.Or(cmp.Compare(a.Errors, b.Errors), cmp.Compare(a.Warnings, b.Warnings), cmp.Compare(a.Infos, b.Infos))
		case "audit":
			return cmp.Compare(len(a.Audit), len(b.Audit))
		}
		return 0
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		c := f(a, b)
		if desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.URL, b.URL))
	})
}

// filterRows keeps rows whose path, query id, engine or status contains q
// (case-insensitive) and, when status is set, of that status.
func filterRows(rows []Row, q, status string) []Row {
	q = strings.ToLower(strings.TrimSpace(q))
	var out []Row
	for _, r := range rows {
		if status != "" && r.Status != status {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(r.URL+" "+r.QueryID+" "+r.Engine+" "+r.Status), q) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// sortValue is a cell's value for the page's script to sort by.
func (r Row) SortValue(key string) string {
	o := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	switch key {
	case "path":
		return r.URL
	case "query":
		return r.QueryID
	case "engine":
		return r.Engine
	case "status":
		return strconv.Itoa(statusRank[r.Status])
	case "offsets":
		return o(r.LastOffsets)
	case "commit":
		return o(r.LastCommit)
	case "age":
		return o(durOpt(r.CommitAge))
	case "watermark":
		return o(r.WatermarkMs)
	case "gap", "trend":
		return o(r.GapMs)
	case "ops":
		return strconv.Itoa(r.Operators)
	case "state":
		return strconv.FormatInt(r.StateBytes, 10)
	case "findings":
		return strconv.Itoa(r.Errors*1_000_000 + r.Warnings*1000 + r.Infos)
	case "audit":
		return strconv.Itoa(len(r.Audit))
	}
	return ""
}

// SortAttrs are the row's sort values as data-s-KEY attributes, for the
// report's script.
func (r Row) SortAttrs() template.HTMLAttr {
	var b strings.Builder
	for i, c := range fleetColumns {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("data-s-" + c.Key + `="` + template.HTMLEscapeString(r.SortValue(c.Key)) + `"`)
	}
	return template.HTMLAttr(b.String())
}
