package sink

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/row"
)

// encodeParquet writes rows as one Parquet file (snappy). The schema is
// the union of the rows' fields, each an optional column typed by what the
// batch holds: all integers → INT64, numbers → DOUBLE, all booleans →
// BOOLEAN, otherwise a STRING (nested JSON and mixed types as their JSON
// text). A field a row lacks is null. Parquet orders a group's columns by
// name.
func encodeParquet(rows []row.Row) ([]byte, error) {
	kinds := map[string]row.Kind{}
	var order []string
	for i := range rows {
		r := &rows[i]
		for j, n := range r.Names {
			k := r.Vals[j].K
			old, seen := kinds[n]
			if !seen {
				order = append(order, n)
				kinds[n] = k
				continue
			}
			kinds[n] = unify(old, k)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("parquet: no columns")
	}
	group := parquet.Group{}
	for _, n := range order {
		group[n] = parquet.Optional(parquetNode(kinds[n]))
	}
	schema := parquet.NewSchema("ckgate", group)
	cols := schema.Columns()
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c[0]] = i
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema, parquet.Compression(&parquet.Snappy))
	batch := make([]parquet.Row, 0, 1024)
	flush := func() error {
		if _, err := w.WriteRows(batch); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		batch = batch[:0]
		return nil
	}
	for i := range rows {
		r := &rows[i]
		pr := make(parquet.Row, len(cols))
		for c := range pr {
			pr[c] = parquet.NullValue().Level(0, 0, c)
		}
		for j, n := range r.Names {
			c := index[n]
			if v, ok := parquetValue(r.Vals[j], kinds[n]); ok {
				pr[c] = v.Level(0, 1, c)
			}
		}
		batch = append(batch, pr)
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return buf.Bytes(), nil
}

// unify is the column kind for values of kinds a and b (Null: none seen).
func unify(a, b row.Kind) row.Kind {
	switch {
	case a == b || b == row.Null:
		return a
	case a == row.Null:
		return b
	case (a == row.Int && b == row.Float) || (a == row.Float && b == row.Int):
		return row.Float
	}
	return row.String
}

func parquetNode(k row.Kind) parquet.Node {
	switch k {
	case row.Int:
		return parquet.Int(64)
	case row.Float:
		return parquet.Leaf(parquet.DoubleType)
	case row.Bool:
		return parquet.Leaf(parquet.BooleanType)
	}
	return parquet.String()
}

func parquetValue(v row.Value, col row.Kind) (parquet.Value, bool) {
	if v.K == row.Null {
		return parquet.Value{}, false
	}
	switch col {
	case row.Int:
		return parquet.Int64Value(v.I), true
	case row.Float:
		f, _ := v.Num()
		return parquet.DoubleValue(f), true
	case row.Bool:
		return parquet.BooleanValue(v.I != 0), true
	}
	if v.K == row.String {
		return parquet.ByteArrayValue([]byte(v.S)), true
	}
	return parquet.ByteArrayValue(v.AppendJSON(nil)), true
}
