// Package demo generates the clickstream that `make demo` sessionizes: a
// deterministic stream of page views by users, in files of five minutes
// each, with the untidiness real streams have: events that arrive late
// (some beyond the watermark), exact duplicates, health checks to filter
// out, and times written both as RFC 3339 and as epoch milliseconds.
package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// Config shapes the clickstream.
type Config struct {
	Seed          uint64
	Users         int
	Files         int           // one file per FileSpan of event time
	FileSpan      time.Duration //
	Start         time.Time     // event time of the first file
	LatePercent   int           // events 15-60 min behind their file
	DupPercent    int           // exact copies of an earlier event of the file
	HealthPercent int           // page "health" (the demo filters these out)
}

// Default is the demo's clickstream: 24 files of 5 minutes from
// 2026-01-01T09:00Z, 200 users (about 120 events a file).
func Default() Config {
	return Config{Seed: 42, Users: 200, Files: 24, FileSpan: 5 * time.Minute,
		Start: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC), LatePercent: 4, DupPercent: 3, HealthPercent: 8}
}

// Event is one page view.
type Event struct {
	EventID string `json:"event_id"`
	UserID  string `json:"user_id"`
	TS      any    `json:"ts"` // RFC 3339 string or epoch ms
	Page    string `json:"page"`
	Amount  int64  `json:"amount"`
}

var pages = []string{"/", "/search", "/product/1", "/product/2", "/product/3", "/cart", "/checkout"}

// Files returns the clickstream as file name → JSON lines, names in time
// order (clicks-0000.jsonl, ...).
func Files(c Config) map[string][]byte {
	r := rand.New(rand.NewPCG(c.Seed, 0xc11c))
	out := make(map[string][]byte, c.Files)
	id := 0
	// each user clicks in bursts (sessions): 10 s to 2 min between clicks,
	// and after one click in eight a pause of 35 to 90 minutes
	next := make([]time.Time, c.Users)
	for u := range next {
		next[u] = c.Start.Add(time.Duration(r.Int64N(int64(time.Hour))))
	}
	for f := range c.Files {
		lo := c.Start.Add(time.Duration(f) * c.FileSpan)
		hi := lo.Add(c.FileSpan)
		var evs []Event
		for {
			u := 0
			for i := range next {
				if next[i].Before(next[u]) {
					u = i
				}
			}
			t := next[u]
			if !t.Before(hi) {
				break
			}
			if r.IntN(8) == 0 {
				next[u] = t.Add(time.Duration(35+r.IntN(55)) * time.Minute)
			} else {
				next[u] = t.Add(time.Duration(10+r.IntN(110)) * time.Second)
			}
			id++
			e := Event{EventID: fmt.Sprintf("e%06d", id), UserID: fmt.Sprintf("u%03d", u), Page: pages[r.IntN(len(pages))]}
			switch n := r.IntN(100); {
			case n < c.LatePercent:
				t = t.Add(-time.Duration(15+r.IntN(45)) * time.Minute)
			case n < c.LatePercent+c.HealthPercent:
				e.Page = "health"
			}
			if e.Page == "/checkout" {
				e.Amount = 5 + r.Int64N(200)
			}
			if r.IntN(2) == 0 {
				e.TS = t.UTC().Format(time.RFC3339Nano)
			} else {
				e.TS = t.UnixMilli()
			}
			evs = append(evs, e)
			if len(evs) > 1 && r.IntN(100) < c.DupPercent {
				evs = append(evs, evs[r.IntN(len(evs)-1)])
			}
		}
		// arrival order within a file is not time order
		r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		var b bytes.Buffer
		for _, e := range evs {
			line, _ := json.Marshal(e)
			b.Write(line)
			b.WriteByte('\n')
		}
		out[fmt.Sprintf("clicks-%04d.jsonl", f)] = b.Bytes()
	}
	return out
}

// Write writes the clickstream into dir (created if needed). A file that
// exists with the same content is left alone, so writing twice changes
// nothing; one with other content is an error.
func Write(dir string, c Config) (written int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	for name, data := range Files(c) {
		p := filepath.Join(dir, name)
		old, err := os.ReadFile(p)
		if err == nil {
			if !bytes.Equal(old, data) {
				return written, fmt.Errorf("%s exists with other content", p)
			}
			continue
		}
		if !os.IsNotExist(err) {
			return written, err
		}
		tmp := filepath.Join(dir, ".tmp-"+name)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return written, err
		}
		if err := os.Rename(tmp, p); err != nil {
			return written, err
		}
		written++
	}
	return written, nil
}
