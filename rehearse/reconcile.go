package rehearse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// Diff is the reconciliation of a drill's sink with the reference.
type Diff struct {
	RefRows, DrillRows int64
	// Lost: reference rows the drill does not hold.
	Lost int64
	// Duplicated: drill rows beyond the matched ones, ExtraCopies of them
	// copies of a reference row, Foreign rows the reference never produced
	// (a double-counted aggregate, a session split or merged wrongly).
	Duplicated, ExtraCopies, Foreign int64
	// Examples name a few business keys that differ.
	Examples []string
}

// OK reports whether the drill holds exactly the reference's effects.
func (d Diff) OK() bool { return d.Lost == 0 && d.Duplicated == 0 }

func (d Diff) String() string {
	if d.OK() {
		return fmt.Sprintf("sink matches the reference (%d rows, by business key)", d.RefRows)
	}
	s := fmt.Sprintf("sink differs from the reference (%d rows, drill %d): %d lost, %d duplicated (%d extra copies, %d rows the reference does not have)",
		d.RefRows, d.DrillRows, d.Lost, d.Duplicated, d.ExtraCopies, d.Foreign)
	if len(d.Examples) > 0 {
		s += "; e.g. " + strings.Join(d.Examples, "; ")
	}
	return s
}

// businessKey returns the output columns that identify one business
// effect: the operator's keys and the window for aggregations, the keys
// for dedup, and none (the whole row) for a stateless query.
func businessKey(s *spec.Spec) []string {
	switch s.Operator.Kind {
	case spec.OpTumbling, spec.OpSliding, spec.OpSessionWindow:
		return append(append([]string{}, s.Operator.Keys...), "window_start", "window_end")
	case spec.OpDedup:
		return append([]string{}, s.Operator.Keys...)
	}
	return nil
}

// canonicalRow parses one output row (a JSON object) and returns it with
// sorted keys and numbers kept as written, and its business key.
func canonicalRow(line []byte, keyCols []string) (row, key string, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", "", fmt.Errorf("output row %.80q: %w", line, err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", "", err
	}
	if len(keyCols) == 0 {
		return string(b), string(b), nil
	}
	parts := make([]string, len(keyCols))
	for i, c := range keyCols {
		v, _ := json.Marshal(m[c])
		parts[i] = c + "=" + string(v)
	}
	return string(b), strings.Join(parts, ","), nil
}

// Reconcile compares the drill's rows with the reference's as multisets
// grouped by business key.
func Reconcile(ref, drill []string, keyCols []string) (Diff, error) {
	type group struct{ ref, drill map[string]int64 }
	groups := map[string]*group{}
	add := func(rows []string, side func(*group) map[string]int64) error {
		for _, r := range rows {
			c, k, err := canonicalRow([]byte(r), keyCols)
			if err != nil {
				return err
			}
			g := groups[k]
			if g == nil {
				g = &group{ref: map[string]int64{}, drill: map[string]int64{}}
				groups[k] = g
			}
			side(g)[c]++
		}
		return nil
	}
	if err := add(ref, func(g *group) map[string]int64 { return g.ref }); err != nil {
		return Diff{}, fmt.Errorf("reference: %w", err)
	}
	if err := add(drill, func(g *group) map[string]int64 { return g.drill }); err != nil {
		return Diff{}, fmt.Errorf("drill: %w", err)
	}
	d := Diff{RefRows: int64(len(ref)), DrillRows: int64(len(drill))}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		var lost, extra, foreign int64
		for r, n := range g.ref {
			if m := g.drill[r]; m < n {
				lost += n - m
			}
		}
		for r, m := range g.drill {
			n, ok := g.ref[r]
			switch {
			case !ok:
				foreign += m
			case m > n:
				extra += m - n
			}
		}
		d.Lost += lost
		d.ExtraCopies += extra
		d.Foreign += foreign
		if (lost > 0 || extra > 0 || foreign > 0) && len(d.Examples) < 3 {
			d.Examples = append(d.Examples, fmt.Sprintf("{%s}: reference %d, drill %d", k, sum(g.ref), sum(g.drill)))
		}
	}
	d.Duplicated = d.ExtraCopies + d.Foreign
	return d, nil
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// ReadFileSink returns the rows a reader following the sink's manifest
// (_spark_metadata) sees, in manifest order. Data files are read from the
// root of st by their base name. A sink without a manifest holds nothing.
func ReadFileSink(ctx context.Context, st gateway.Store) ([]string, error) {
	return readSink(ctx, st, checkpoint.ReadFileSinkLog)
}

// readSink returns the rows of the data files the sink log read by read
// names, read from the root of st by their base name.
func readSink(ctx context.Context, st gateway.Store, read func(context.Context, gateway.Store, string) ([]checkpoint.SinkFileStatus, int64, error)) ([]string, error) {
	files, _, err := read(ctx, st, checkpoint.SinkMetadataDir)
	if errors.Is(err, gateway.ErrNotFound) || errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sink manifest: %w", err)
	}
	var rows []string
	for _, f := range files {
		if f.Action != "" && f.Action != checkpoint.SinkActionAdd {
			continue
		}
		key := path.Base(f.Path)
		data, _, err := st.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("sink file %s named by the manifest: %w", f.Path, err)
		}
		_ = lines(data, func(l []byte) error { rows = append(rows, string(l)); return nil })
	}
	return rows, nil
}
