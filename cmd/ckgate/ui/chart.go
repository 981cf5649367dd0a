package ui

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// MaxChartPoints bounds the points drawn per series; longer series are
// downsampled (Downsample) and the chart says so.
const MaxChartPoints = 400

// Point is one value at one batch (X is the batch id, or a time in ms for
// time axes).
type Point struct {
	X int64
	Y float64
}

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point // as drawn (downsampled)
	Total  int     // points before downsampling
}

// Marker is a batch the chart marks: in flight, a missing commit, an
// offset that went backwards or stalled.
type Marker struct {
	X    int64
	Kind string // css class: inflight, missing, backwards, stalled
	Text string
}

// Chart is one chart and the table that mirrors it.
type Chart struct {
	ID    string
	Title string
	// What the numbers are and where they come from (the <desc>).
	Desc    string
	Unit    string
	Exact   bool // read from the checkpoint; false: estimated
	XLabel  string
	Series  []Series
	Markers []Marker
}

// Downsample returns at most max points of ps (in X order): the minimum
// and the maximum of each of max/2 equal buckets, so spikes survive.
func Downsample(ps []Point, max int) []Point {
	if len(ps) <= max || max < 2 {
		return ps
	}
	buckets := max / 2
	out := make([]Point, 0, max)
	for b := range buckets {
		lo, hi := b*len(ps)/buckets, (b+1)*len(ps)/buckets
		if lo >= hi {
			continue
		}
		mi, ma := lo, lo
		for i := lo; i < hi; i++ {
			if ps[i].Y < ps[mi].Y {
				mi = i
			}
			if ps[i].Y > ps[ma].Y {
				ma = i
			}
		}
		switch {
		case mi == ma:
			out = append(out, ps[mi])
		case mi < ma:
			out = append(out, ps[mi], ps[ma])
		default:
			out = append(out, ps[ma], ps[mi])
		}
	}
	return out
}

// addSeries adds a series, downsampled.
func (c *Chart) addSeries(name string, ps []Point) {
	c.Series = append(c.Series, Series{Name: name, Points: Downsample(ps, MaxChartPoints), Total: len(ps)})
}

// Empty reports whether the chart has no point.
func (c *Chart) Empty() bool {
	for _, s := range c.Series {
		if len(s.Points) > 0 {
			return false
		}
	}
	return true
}

// Downsampled reports whether a series was downsampled.
func (c *Chart) Downsampled() bool {
	for _, s := range c.Series {
		if len(s.Points) < s.Total {
			return true
		}
	}
	return false
}

// FullDesc is Desc with exactness and downsampling spelled out.
func (c *Chart) FullDesc() string {
	d := c.Desc
	if c.Exact {
		d += " Exact: read from the checkpoint."
	} else {
		d += " Estimated."
	}
	for _, s := range c.Series {
		if len(s.Points) < s.Total {
			d += fmt.Sprintf(" %s: downsampled from %d to %d points (minimum and maximum of each bucket); the batch table has every batch.", s.Name, s.Total, len(s.Points))
		}
	}
	return d
}

const (
	chartW, chartH         = 760, 200
	padL, padR, padT, padB = 64, 12, 10, 26
	sparkW, sparkH         = 120, 24
	palette                = "#1f77b4,#d62728,#2ca02c,#9467bd,#ff7f0e,#8c564b,#e377c2,#17becf"
)

func color(i int) string {
	cs := strings.Split(palette, ",")
	return cs[i%len(cs)]
}

// bounds is the extent of every point and marker.
func (c *Chart) bounds() (x0, x1 int64, y0, y1 float64) {
	x0, x1, y0, y1 = math.MaxInt64, math.MinInt64, math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x0, x1 = min(x0, p.X), max(x1, p.X)
			y0, y1 = min(y0, p.Y), max(y1, p.Y)
		}
	}
	for _, m := range c.Markers {
		x0, x1 = min(x0, m.X), max(x1, m.X)
	}
	if x0 > x1 {
		x0, x1 = 0, 1
	}
	if x0 == x1 {
		x1 = x0 + 1
	}
	if math.IsInf(y0, 1) {
		y0, y1 = 0, 1
	}
	y0 = min(y0, 0)
	if y0 == y1 {
		y1 = y0 + 1
	}
	return
}

// SVG draws the chart.
func (c *Chart) SVG() template.HTML {
	var b strings.Builder
	x0, x1, y0, y1 := c.bounds()
	sx := func(x int64) float64 { return padL + float64(x-x0)/float64(x1-x0)*(chartW-padL-padR) }
	sy := func(y float64) float64 { return chartH - padB - (y-y0)/(y1-y0)*(chartH-padT-padB) }
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" aria-labelledby="%s-t %s-d" data-chart="%s">`,
		chartW, chartH, chartW, chartH, c.ID, c.ID, c.ID)
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, c.ID, esc(c.Title), c.ID, esc(c.FullDesc()))
	// axes and labels
	fmt.Fprintf(&b, `<path class="axis" d="M%d %d V%d H%d"/>`, padL, padT, chartH-padB, chartW-padR)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, padL-4, padT+8, esc(human(y1, c.Unit)))
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, padL-4, chartH-padB, esc(human(y0, c.Unit)))
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">%s %d</text>`, padL, chartH-8, esc(c.XLabel), x0)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%d</text>`, chartW-padR, chartH-8, x1)
	for _, m := range c.Markers {
		x := sx(m.X)
		fmt.Fprintf(&b, `<line class="marker %s" x1="%.1f" x2="%.1f" y1="%d" y2="%d"><title>%s</title></line>`, m.Kind, x, x, padT, chartH-padB, esc(m.Text))
	}
	if len(c.Series) > 1 {
		for i, s := range c.Series {
			fmt.Fprintf(&b, `<text class="legend" x="%d" y="%d" text-anchor="end" fill="%s">%s</text>`, chartW-padR-4, padT+12+12*i, color(i), esc(s.Name))
		}
	}
	for i, s := range c.Series {
		if len(s.Points) == 0 {
			continue
		}
		var pts strings.Builder
		for j, p := range s.Points {
			if j > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", sx(p.X), sy(p.Y))
		}
		fmt.Fprintf(&b, `<polyline class="series" data-series="%s" data-points="%d" fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`,
			esc(s.Name), len(s.Points), color(i), pts.String(), esc(s.Name))
		if len(s.Points) == 1 {
			p := s.Points[0]
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, sx(p.X), sy(p.Y), color(i))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// Sparkline draws ps small, for a table cell.
func Sparkline(id, title string, ps []Point) template.HTML {
	if len(ps) == 0 {
		return ""
	}
	ps = Downsample(ps, sparkW/2)
	c := Chart{Series: []Series{{Points: ps}}}
	x0, x1, y0, y1 := c.bounds()
	var pts strings.Builder
	for j, p := range ps {
		if j > 0 {
			pts.WriteByte(' ')
		}
		fmt.Fprintf(&pts, "%.1f,%.1f", 1+float64(p.X-x0)/float64(x1-x0)*(sparkW-2), sparkH-1-(p.Y-y0)/(y1-y0)*(sparkH-2))
	}
	esc := template.HTMLEscapeString
	return template.HTML(fmt.Sprintf(`<svg class="spark" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-labelledby="%s"><title id="%s">%s</title><polyline class="series" data-points="%d" fill="none" stroke="#1f77b4" points="%s"/></svg>`,
		sparkW, sparkH, sparkW, sparkH, id, id, esc(title), len(ps), pts.String()))
}

// human is v in unit, shortened: ms as s/min/h, bytes as KiB/MiB.
func human(v float64, unit string) string {
	a := math.Abs(v)
	switch unit {
	case "ms":
		switch {
		case a >= 3_600_000:
			return strconv.FormatFloat(v/3_600_000, 'f', 1, 64) + " h"
		case a >= 60_000:
			return strconv.FormatFloat(v/60_000, 'f', 1, 64) + " min"
		case a >= 1000:
			return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
		}
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case "bytes":
		switch {
		case a >= 1<<30:
			return strconv.FormatFloat(v/(1<<30), 'f', 1, 64) + " GiB"
		case a >= 1<<20:
			return strconv.FormatFloat(v/(1<<20), 'f', 1, 64) + " MiB"
		case a >= 1<<10:
			return strconv.FormatFloat(v/(1<<10), 'f', 1, 64) + " KiB"
		}
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	if v == math.Trunc(v) && a < 1e15 {
		return strconv.FormatInt(int64(v), 10) + " " + unit
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + unit
}

// num is an exact value for a data table.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
