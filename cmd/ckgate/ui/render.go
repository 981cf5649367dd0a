package ui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"opt": func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	},
	"gap": func(p *int64) string {
		if p == nil {
			return "-"
		}
		return human(float64(*p), "ms")
	},
	"age": func(d *time.Duration) string {
		if d == nil {
			return "-"
		}
		return d.String()
	},
	"bytes": func(n int64) string { return human(float64(n), "bytes") },
	"num":   num,
	"inc":   func(i int) int { return i + 1 },
	"dec":   func(i int) int { return i - 1 },
	"lanes": Lanes,
	"statuses": func() []string {
		return []string{string(checkpoint.StatusClean), string(checkpoint.StatusInFlight), string(checkpoint.StatusInconsistent), string(checkpoint.StatusEmpty), "unreadable"}
	},
}).ParseFS(assets, "assets/pages.html"))

func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

type servedPage struct {
	Title      string
	Roots      string
	Fleet      *fleetView
	Checkpoint *checkpointView
}

// CheckpointLink is the served address of the checkpoint page of loc.
func CheckpointLink(loc string) string { return "/c?url=" + url.QueryEscape(loc) }

// RenderFleet writes the served fleet page; q is its query (sort, dir, q,
// status, page).
func RenderFleet(w io.Writer, f *Fleet, q url.Values) error {
	v := newFleetView(f, q, false, func(r Row) string { return CheckpointLink(r.URL) })
	return render(w, "served", servedPage{Title: fmt.Sprintf("%d checkpoints", v.All), Roots: strings.Join(f.Roots, " "), Fleet: v})
}

// RenderCheckpoint writes the served page of one checkpoint; q holds its
// url and the batch table's page.
func RenderCheckpoint(w io.Writer, c *Checkpoint, roots []string, now time.Time, q url.Values) error {
	v := newCheckpointView(c, now, q.Get("page"), false, CheckpointLink(c.URL))
	return render(w, "served", servedPage{Title: c.URL, Roots: strings.Join(roots, " "), Checkpoint: v})
}

type reportPage struct {
	Title       string
	Roots       string
	Written     string
	CSS         template.CSS
	JS          template.JS
	Fleet       *fleetView
	Checkpoints []*checkpointView
}

// WriteReport writes the fleet and the page of every checkpoint in cps
// (the same checkpoints, read in full) as one self-contained HTML file:
// styles and script inline, links between its sections, no request to
// anywhere.
func WriteReport(w io.Writer, f *Fleet, cps []*Checkpoint) error {
	anchors := map[string]string{}
	var views []*checkpointView
	for i, c := range cps {
		a := fmt.Sprintf("c-%d", i+1)
		anchors[c.URL] = a
		v := newCheckpointView(c, f.Now, "", true, "")
		v.Anchor = a
		for _, ch := range v.Charts {
			ch.ID = a + "-" + ch.ID
		}
		views = append(views, v)
	}
	fv := newFleetView(f, url.Values{}, true, func(r Row) string { return "#" + anchors[r.URL] })
	return render(w, "report", reportPage{
		Title: fmt.Sprintf("%d checkpoints", fv.All), Roots: strings.Join(f.Roots, " "), Written: f.Now.UTC().Format(time.RFC3339),
		CSS: template.CSS(asset("ui.css")), JS: template.JS(asset("ui.js")), Fleet: fv, Checkpoints: views})
}

// render executes a page into a buffer first: a failed page writes nothing.
func render(w io.Writer, name string, data any) error {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return fmt.Errorf("render %s page: %w", name, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
