package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/row"
)

// FuzzParquetRows: any bytes either decode to rows or are refused with an
// error naming the file; never a panic or a hang. Seeds: data files Spark
// wrote (testdata/delta), cut short and with a byte flipped.
func FuzzParquetRows(f *testing.F) {
	paths, _ := filepath.Glob("../../testdata/delta/*/*.parquet")
	for _, p := range paths[:min(len(paths), 4)] {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		flipped := append([]byte{}, data...)
		flipped[len(flipped)/3] ^= 0xff
		f.Add(flipped)
	}
	f.Add([]byte("PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := parquetRows("t/part-0.parquet", data, nil, nil, func(*row.Row) error { n++; return nil })
		if err != nil && !strings.Contains(err.Error(), "t/part-0.parquet") {
			t.Fatalf("error without the file name: %v", err)
		}
	})
}
