package checkpoint

import (
	"context"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/filetree"
)

// sparkRoot is the copy of Spark's golden checkpoints in the repository.
const sparkRoot = "../../testdata/spark"

func sparkPath(rel string) string { return filepath.Join(sparkRoot, filepath.FromSlash(rel)) }

// sparkFile returns the bytes of a testdata file.
func sparkFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(sparkPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sparkStore opens a testdata checkpoint directory read-only through the
// local-disk backend.
func sparkStore(t testing.TB, rel string) gateway.Store {
	t.Helper()
	st, err := filestore.New(sparkPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return st
}

// memCopy loads a testdata directory into a memstore (to mutate it), under
// prefix.
func memCopy(t testing.TB, rel, prefix string) *memstore.Store {
	t.Helper()
	ms := memstore.New()
	files, err := filetree.Read(sparkPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range slices.Sorted(maps.Keys(files)) {
		put(t, ms, prefix+k, files[k])
	}
	return ms
}

func put(t testing.TB, st gateway.Store, key string, data []byte) {
	t.Helper()
	if _, err := st.Put(context.Background(), key, data, gateway.None()); err != nil {
		t.Fatal(err)
	}
}

func del(t testing.TB, st gateway.Store, key string) {
	t.Helper()
	if err := st.Delete(context.Background(), key, gateway.None()); err != nil {
		t.Fatal(err)
	}
}

func inspect(t testing.TB, st gateway.Store, o Options) *Report {
	t.Helper()
	r, err := Inspect(context.Background(), st, o)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return r
}

func i64(v int64) *int64 { return &v }

func eqPtr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// findingsOf returns "severity id key" for the findings at or above sev.
func findingsOf(r *Report, min Severity) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity.rank() <= min.rank() {
			out = append(out, string(f.Severity)+" "+f.ID+" "+f.Key)
		}
	}
	return out
}

// hasFinding reports whether r has a finding with id, severity and key
// (key "" matches any).
func hasFinding(r *Report, sev Severity, id, key string) bool {
	for _, f := range r.Findings {
		if f.ID == id && f.Severity == sev && (key == "" || f.Key == key) {
			return true
		}
	}
	return false
}

func countFindings(r *Report, id string) int {
	n := 0
	for _, f := range r.Findings {
		if f.ID == id {
			n++
		}
	}
	return n
}

// find returns the element of s match holds for, and fails the test with
// the message when there is none.
func find[T any](t testing.TB, s []T, match func(*T) bool, format string, args ...any) *T {
	t.Helper()
	for i := range s {
		if match(&s[i]) {
			return &s[i]
		}
	}
	t.Fatalf(format, args...)
	return nil
}

func operator(t testing.TB, r *Report, id string) *Operator {
	t.Helper()
	return find(t, r.Operators, func(o *Operator) bool { return o.ID == id }, "no operator %s in %+v", id, r.Operators)
}

func store(t testing.TB, op *Operator, name string) *StoreReport {
	t.Helper()
	return find(t, op.Stores, func(s *StoreReport) bool { return s.Name == name }, "operator %s has no store %q", op.ID, name)
}

func detail(t testing.TB, p *PartitionReport, version int64, kind string) *VersionDetail {
	t.Helper()
	return find(t, p.Details, func(d *VersionDetail) bool { return d.Version == version && d.Kind == kind },
		"partition %d has no decoded %d.%s: %+v", p.ID, version, kind, p.Details)
}

func attrs(key string, data []byte) gateway.Attrs {
	return gateway.Attrs{Key: key, Size: int64(len(data))}
}

var t0ctx = context.Background()

func castagnoliSum(b []byte) int32 { return int32(crc32.Checksum(b, castagnoli)) }
