package ui

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// Lanes draws one lane per row: its batches as ticks at their batch
// timestamps on one time axis; in-flight and missing commits marked.
func Lanes(rows []Row) template.HTML {
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range rows {
		for _, b := range r.Lane {
			if b.TimestampMs != nil && *b.TimestampMs > 0 {
				t0, t1 = min(t0, *b.TimestampMs), max(t1, *b.TimestampMs)
			}
		}
	}
	if t0 > t1 {
		return ""
	}
	if t0 == t1 {
		t1 = t0 + 1
	}
	const w, lh, left = 760, 12, 40
	h := len(rows)*lh + 24
	esc := template.HTMLEscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lanes" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-labelledby="lanes-t lanes-d"><title id="lanes-t">Batches of each checkpoint on one time axis</title>`, w, h, w, h)
	fmt.Fprintf(&b, `<desc id="lanes-d">One lane per checkpoint (numbered as in the table), a tick per batch at its batchTimestampMs from %s to %s; red: in flight (offsets, no commit), orange: offsets whose commit is missing. Exact: read from the checkpoints.</desc>`,
		time.UnixMilli(t0).UTC().Format(time.RFC3339), time.UnixMilli(t1).UTC().Format(time.RFC3339))
	x := func(ms int64) float64 { return left + float64(ms-t0)/float64(t1-t0)*(w-left-8) }
	for i, r := range rows {
		y := i*lh + 4
		var ok, fl, miss strings.Builder
		for _, bt := range r.Lane {
			if bt.TimestampMs == nil || *bt.TimestampMs <= 0 {
				continue
			}
			tick := fmt.Sprintf("M%.1f %dv%d", x(*bt.TimestampMs), y, lh-3)
			switch {
			case bt.Committed:
				ok.WriteString(tick)
			case r.LastOffsets != nil && bt.ID == *r.LastOffsets:
				fl.WriteString(tick)
			default:
				miss.WriteString(tick)
			}
		}
		fmt.Fprintf(&b, `<g data-lane="%d"><title>%s</title><text class="tick" x="%d" y="%d" text-anchor="end">%d</text>`, r.Index, esc(r.URL), left-4, y+lh-4, r.Index)
		for _, p := range []struct{ cls, d string }{{"tick-ok", ok.String()}, {"tick-inflight", fl.String()}, {"tick-missing", miss.String()}} {
			if p.d != "" {
				fmt.Fprintf(&b, `<path class="%s" d="%s"/>`, p.cls, p.d)
			}
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">%s</text><text class="tick" x="%d" y="%d" text-anchor="end">%s</text></svg>`,
		left, h-6, time.UnixMilli(t0).UTC().Format("2006-01-02 15:04:05"), w-8, h-6, time.UnixMilli(t1).UTC().Format("2006-01-02 15:04:05"))
	return template.HTML(b.String())
}
