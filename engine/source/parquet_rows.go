package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ckgate/ckgate/engine/row"
)

// column is how one top-level parquet column becomes a row value.
type pqColumn struct {
	name string
	conv func(parquet.Value) row.Value
}

// parquetRows emits the rows of the parquet file data (key names it in
// errors): one row a record, its fields the file's top-level columns in
// schema order, then extra (partition values) as strings. Integers →
// int, floating point → float, booleans → bool, strings and binary →
// string, TIMESTAMP (micros, millis, nanos; or Spark's legacy INT96) and
// DATE → RFC 3339 text (UTC), which event_time reads; a null is a
// missing field. A nested or repeated column, or a file parquet-go cannot
// read, is an error naming the file and the column; a corrupt file never
// panics.
func parquetRows(key string, data []byte, extra []row.Value, extraNames []string, emit func(*row.Row) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: not a readable parquet file: %v", key, r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%s: not a parquet file: %w", key, err)
	}
	if n := f.NumRows(); n < 0 || n > int64(len(data))*8+1024 {
		return fmt.Errorf("%s: footer announces %d rows in %d bytes", key, n, len(data))
	}
	fields := f.Schema().Fields()
	cols := make([]pqColumn, len(fields))
	for i, fl := range fields {
		if !fl.Leaf() || fl.Repeated() {
			return fmt.Errorf("%s: column %q is nested or repeated, which the delta source does not read", key, fl.Name())
		}
		conv, err := converter(fl)
		if err != nil {
			return fmt.Errorf("%s: column %q: %w", key, fl.Name(), err)
		}
		cols[i] = pqColumn{name: fl.Name(), conv: conv}
	}
	r := parquet.NewReader(f)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	var out row.Row
	n := 0
	for {
		k, rerr := r.ReadRows(buf)
		for _, pr := range buf[:k] {
			n++
			out.Names, out.Vals = out.Names[:0], out.Vals[:0]
			for _, v := range pr {
				c := v.Column()
				if c < 0 || c >= len(cols) {
					return fmt.Errorf("%s: row %d: value of column %d of %d", key, n, c, len(cols))
				}
				if v.IsNull() {
					continue
				}
				out.Names = append(out.Names, cols[c].name)
				out.Vals = append(out.Vals, cols[c].conv(v))
			}
			out.Names = append(out.Names, extraNames...)
			out.Vals = append(out.Vals, extra...)
			if err := emit(&out); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("%s: row %d: %w", key, n+1, rerr)
		}
		if k == 0 {
			return fmt.Errorf("%s: the reader made no progress at row %d", key, n)
		}
	}
}

const rfc3339Micro = "2006-01-02T15:04:05.999999Z07:00"

func converter(fl parquet.Field) (func(parquet.Value) row.Value, error) {
	lt := fl.Type().LogicalType()
	if lt != nil {
		if _, ok := lt.Value.(*format.DecimalType); ok {
			return nil, errors.New("decimal columns are not read by the delta source")
		}
	}
	switch fl.Type().Kind() {
	case parquet.Boolean:
		return func(v parquet.Value) row.Value { return row.BoolV(v.Boolean()) }, nil
	case parquet.Int32:
		if lt != nil {
			if _, ok := lt.Value.(*format.DateType); ok {
				return func(v parquet.Value) row.Value {
					return row.StrV(time.Unix(int64(v.Int32())*86400, 0).UTC().Format("2006-01-02"))
				}, nil
			}
		}
		return func(v parquet.Value) row.Value { return row.IntV(int64(v.Int32())) }, nil
	case parquet.Int64:
		if lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				unit := time.Microsecond
				switch ts.Unit.Value.(type) {
				case *format.MilliSeconds:
					unit = time.Millisecond
				case *format.NanoSeconds:
					unit = time.Nanosecond
				}
				return func(v parquet.Value) row.Value {
					return row.StrV(time.Unix(0, 0).Add(time.Duration(v.Int64()) * unit).UTC().Format(rfc3339Micro))
				}, nil
			}
		}
		return func(v parquet.Value) row.Value { return row.IntV(v.Int64()) }, nil
	case parquet.Int96:
		// Spark's legacy timestamps: nanoseconds of the day, then the Julian day
		return func(v parquet.Value) row.Value {
			i := v.Int96()
			nanos := int64(i[1])<<32 | int64(i[0])
			days := int64(i[2]) - 2440588
			return row.StrV(time.Unix(days*86400, nanos).UTC().Format(rfc3339Micro))
		}, nil
	case parquet.Float:
		return func(v parquet.Value) row.Value { return row.FloatV(float64(v.Float())) }, nil
	case parquet.Double:
		return func(v parquet.Value) row.Value { return row.FloatV(v.Double()) }, nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return func(v parquet.Value) row.Value { return row.StrV(string(v.ByteArray())) }, nil
	}
	return nil, fmt.Errorf("type %s is not read by the delta source", fl.Type())
}
