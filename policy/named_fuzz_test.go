package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

// FuzzLifecycleNamesSource: every lifecycle configuration ParseLifecycle
// rejects (S3, GCS and Azure shapes, seeded from testdata/lifecycle) is an
// error naming the file it came from.
func FuzzLifecycleNamesSource(f *testing.F) {
	for _, provider := range []string{"s3", "gcs", "azure"} {
		files, _ := filepath.Glob(filepath.Join("../testdata/lifecycle", provider, "*.json"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && !strings.HasSuffix(file, ".golden.json") {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	const source = "buckets/prod-checkpoints.lifecycle.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := policy.ParseLifecycle(source, data); err != nil && !strings.Contains(err.Error(), source) {
			t.Fatalf("error does not name %s: %v", source, err)
		}
	})
}

// FuzzLoadData: a --data file LoadData rejects is an error naming it.
func FuzzLoadData(f *testing.F) {
	files, _ := filepath.Glob("../testdata/policies/*/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"retention":{"min_batches":100}}`))
	f.Add([]byte("retention:\n  min_batches: 100\n"))
	f.Add([]byte(`{"a":`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "data.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := policy.LoadData(file); err != nil && !strings.Contains(err.Error(), file) {
			t.Fatalf("error does not name %s: %v", file, err)
		}
	})
}
