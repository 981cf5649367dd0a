package sink

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/row"
)

// encodeParquet writes rows as one Parquet file (snappy) with the columns
// cols (inferColumns, or a Delta table's schema), each optional: long →
// INT64, double → DOUBLE, boolean → BOOLEAN, timestamp → INT64
// TIMESTAMP(MICROS, UTC), string → BYTE_ARRAY STRING (nested JSON and
// other kinds as their JSON text). A field a row lacks is null. Parquet
// orders a group's columns by name. A value that does not fit its column,
// or a field cols lack, is an error naming the field.
func encodeParquet(rows []row.Row, cols []Column) ([]byte, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("parquet: no columns")
	}
	group := parquet.Group{}
	types := make(map[string]ColType, len(cols))
	for _, c := range cols {
		group[c.Name] = parquet.Optional(parquetNode(c.Type))
		types[c.Name] = c.Type
	}
	schema := parquet.NewSchema("ckgate", group)
	leaves := schema.Columns()
	index := make(map[string]int, len(leaves))
	for i, c := range leaves {
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
		pr := make(parquet.Row, len(leaves))
		for c := range pr {
			pr[c] = parquet.NullValue().Level(0, 0, c)
		}
		for j, n := range r.Names {
			c, ok := index[n]
			if !ok {
				return nil, fmt.Errorf("parquet: row %d: field %q is not a column (%s)", i, n, describeColumns(cols))
			}
			t := types[n]
			cv, err := convert(r.Vals[j], t)
			if err != nil {
				return nil, fmt.Errorf("parquet: row %d: field %q: %w", i, n, err)
			}
			if !cv.null {
				pr[c] = parquetValue(cv, t).Level(0, 1, c)
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

func parquetNode(t ColType) parquet.Node {
	switch t {
	case ColLong:
		return parquet.Int(64)
	case ColDouble:
		return parquet.Leaf(parquet.DoubleType)
	case ColBool:
		return parquet.Leaf(parquet.BooleanType)
	case ColTimestamp:
		return parquet.Timestamp(parquet.Microsecond)
	}
	return parquet.String()
}

func parquetValue(v converted, t ColType) parquet.Value {
	switch t {
	case ColLong, ColTimestamp:
		return parquet.Int64Value(v.i)
	case ColDouble:
		return parquet.DoubleValue(v.f)
	case ColBool:
		return parquet.BooleanValue(v.b)
	}
	return parquet.ByteArrayValue(v.s)
}
