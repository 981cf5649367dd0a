package ui

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// GapPoints is the watermark gap of every batch that has one:
// batchTimestampMs − batchWatermarkMs (Spark's definition), skipping
// batches whose watermark is 0 (no watermark yet), as Spark's UI does.
func GapPoints(bs []checkpoint.Batch) []Point {
	var ps []Point
	for _, b := range bs {
		if b.WatermarkMs != nil && b.TimestampMs != nil && *b.WatermarkMs > 0 {
			ps = append(ps, Point{b.ID, float64(*b.TimestampMs - *b.WatermarkMs)})
		}
	}
	return ps
}

// charts draws the charts of a checkpoint's page from its report.
func charts(r *checkpoint.Report) []*Chart {
	bs := r.Batches
	markers := batchMarkers(r)
	gap := &Chart{ID: "gap", Title: "Watermark gap", Unit: "ms", Exact: true, XLabel: "batch",
		Desc:    "batchTimestampMs − batchWatermarkMs of each batch (Spark's definition), from offsets/N; batches whose watermark is 0 (no watermark yet) are left out, as in Spark's UI.",
		Markers: markers}
	gap.addSeries("gap", GapPoints(bs))

	interval := &Chart{ID: "interval", Title: "Trigger interval", Unit: "ms", Exact: true, XLabel: "batch",
		Desc: "Δ batchTimestampMs between a batch and the batch before it, from offsets/N."}
	var ivs []Point
	for i := 1; i < len(bs); i++ {
		a, b := bs[i-1], bs[i]
		if a.TimestampMs != nil && b.TimestampMs != nil && b.ID == a.ID+1 {
			ivs = append(ivs, Point{b.ID, float64(*b.TimestampMs - *a.TimestampMs)})
		}
	}
	interval.addSeries("interval", ivs)

	dur := &Chart{ID: "duration", Title: "Batch duration (estimate)", Unit: "ms", Exact: false, XLabel: "batch",
		Desc:    "Modification time of commits/N minus that of offsets/N, as the store lists them: an estimate of the time the batch took (clock and listing granularity apply).",
		Markers: markers}
	var ds []Point
	for _, b := range bs {
		if b.OffsetsWrittenMs != nil && b.CommitWrittenMs != nil {
			ds = append(ds, Point{b.ID, float64(*b.CommitWrittenMs - *b.OffsetsWrittenMs)})
		}
	}
	dur.addSeries("commit − offsets", ds)

	offs := &Chart{ID: "offsets", Title: "Offsets advanced per source", Unit: "", Exact: true, XLabel: "batch",
		Desc: "How far each source moved in each batch: end offset of batch N minus that of batch N−1 (Kafka: the sum over partitions; files: log offset; rate: value; Delta: reservoirVersion). Marked: offsets that went backwards or stalled."}
	bySource := map[string][]Point{}
	var sources []string
	prev := map[string]int64{}
	prevID := map[string]int64{}
	for _, b := range bs {
		for _, o := range b.Offsets {
			pos, kind, ok := checkpoint.OffsetPosition(o.SourceOffset)
			if !ok {
				continue
			}
			name := fmt.Sprintf("source %s (%s)", o.Source, kind)
			if p, seen := prev[name]; seen && prevID[name] == b.ID-1 {
				d := pos - p
				if _, ok := bySource[name]; !ok {
					sources = append(sources, name)
				}
				bySource[name] = append(bySource[name], Point{b.ID, float64(d)})
				switch {
				case d < 0:
					offs.Markers = append(offs.Markers, Marker{b.ID, "backwards", fmt.Sprintf("batch %d: %s went backwards by %d", b.ID, name, -d)})
				case d == 0 && !b.Committed:
				case d == 0:
					offs.Markers = append(offs.Markers, Marker{b.ID, "stalled", fmt.Sprintf("batch %d: %s did not move", b.ID, name)})
				}
			}
			prev[name], prevID[name] = pos, b.ID
		}
	}
	for _, s := range sources {
		offs.addSeries(s, bySource[s])
	}
	if len(offs.Markers) > 200 {
		offs.Markers = offs.Markers[:200]
	}

	state := &Chart{ID: "state", Title: "State bytes per operator and version", Unit: "bytes", Exact: true, XLabel: "version",
		Desc: "Bytes of the state files of each retained version that inspect decoded (the latest versions of each partition), summed over partitions, delta and snapshot files apart."}
	for _, op := range r.Operators {
		sum := map[string]map[int64]int64{}
		for _, st := range op.Stores {
			for _, p := range st.Partitions {
				for _, d := range p.Details {
					if sum[d.Kind] == nil {
						sum[d.Kind] = map[int64]int64{}
					}
					sum[d.Kind][d.Version] += d.Bytes
				}
			}
		}
		kinds := make([]string, 0, len(sum))
		for k := range sum {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			var ps []Point
			for v, n := range sum[k] {
				ps = append(ps, Point{v, float64(n)})
			}
			slices.SortFunc(ps, func(a, b Point) int { return int(a.X - b.X) })
			state.addSeries(fmt.Sprintf("op %s %s", op.ID, k), ps)
		}
	}
	out := []*Chart{gap, interval, dur, offs, state}
	return append(out, progressCharts(bs)...)
}

// progressCharts are drawn from what ckgate's engine records in
// commits/N; Spark's checkpoints have none.
func progressCharts(bs []checkpoint.Batch) []*Chart {
	var inRows, outRows, rate, dropped, accepted, stateRows []Point
	for _, b := range bs {
		p := b.Progress
		if p == nil {
			continue
		}
		inRows = append(inRows, Point{b.ID, float64(p.InputRows)})
		outRows = append(outRows, Point{b.ID, float64(p.OutputRows)})
		if s := p.Elapsed().Seconds(); s > 0 {
			rate = append(rate, Point{b.ID, float64(p.InputRows) / s})
		}
		dropped = append(dropped, Point{b.ID, float64(p.LateRowsDropped)})
		accepted = append(accepted, Point{b.ID, float64(p.LateRowsAccepted)})
		stateRows = append(stateRows, Point{b.ID, float64(p.StateRows)})
	}
	if len(inRows) == 0 {
		return nil
	}
	return []*Chart{
		progressChart("rows", "Rows in and out", "rows",
			"Rows read from the source and rows handed to the sink per batch, as ckgate's engine recorded them in commits/N (kept across restarts).",
			namedPoints{"input rows", inRows}, namedPoints{"output rows", outRows}),
		progressChart("rate", "Process rate", "rows/s",
			"Input rows divided by the batch's recorded processing time (its phases up to the commit), from commits/N.",
			namedPoints{"rows/s", rate}),
		progressChart("late", "Late rows", "rows",
			"Rows at or below the batch watermark (dropped, Spark's rule) and rows above it but inside the delay window (accepted), from commits/N.",
			namedPoints{"dropped by the watermark", dropped}, namedPoints{"late but accepted", accepted}),
		progressChart("staterows", "State rows", "rows",
			"Rows held in state after each batch, from commits/N.",
			namedPoints{"state rows", stateRows}),
	}
}

// namedPoints are the points of one series and its name.
type namedPoints struct {
	name string
	ps   []Point
}

// progressChart is a chart per batch of what the engine recorded (exact),
// with the series in the order given.
func progressChart(id, title, unit, desc string, series ...namedPoints) *Chart {
	c := &Chart{ID: id, Title: title, Unit: unit, Exact: true, XLabel: "batch", Desc: desc}
	for _, s := range series {
		c.addSeries(s.name, s.ps)
	}
	return c
}

// batchMarkers marks batches with offsets but no commit: the latest one
// is in flight, an earlier one is a missing commit.
func batchMarkers(r *checkpoint.Report) []Marker {
	var ms []Marker
	for _, b := range r.Batches {
		if b.Committed {
			continue
		}
		if r.LatestOffsetsBatch != nil && b.ID == *r.LatestOffsetsBatch {
			ms = append(ms, Marker{b.ID, "inflight", fmt.Sprintf("batch %d is in flight (offsets, no commit)", b.ID)})
		} else if r.CommitLog.Count > 0 {
			ms = append(ms, Marker{b.ID, "missing", fmt.Sprintf("batch %d has offsets but no commit", b.ID)})
		}
		if len(ms) >= 200 {
			break
		}
	}
	return ms
}
