package policy

import (
	"slices"
	"testing"
)

func TestAncestors(t *testing.T) {
	for loc, want := range map[string][]string{
		"file:///tmp/a/k": {"file:///", "file:///tmp", "file:///tmp/a"},
		"file:///k":       {"file:///"},
		"file:///":        nil,
		"s3://b/x/y/k":    {"s3://b", "s3://b/x", "s3://b/x/y"},
		"s3://b/k":        {"s3://b"},
		"s3://b":          nil,
		"gs://b/k":        {"gs://b"},
		"az://acct/c/p/k": {"az://acct/c", "az://acct/c/p"},
		"az://acct/c/k":   {"az://acct/c"},
		"az://acct/c":     nil,
		"az://acct":       nil,
	} {
		if got := ancestors(loc); !slices.Equal(got, want) {
			t.Errorf("ancestors(%q) = %q, want %q", loc, got, want)
		}
	}
}

func TestOperatorMetadataDir(t *testing.T) {
	for dir, want := range map[string]bool{
		"file:///ck/state/0/_metadata": true,
		"s3://b/ck/state/1/_metadata":  true,
		"s3://b/ck/state/_metadata":    false,
		"s3://b/ck/_metadata":          false,
		"s3://b/ck/offsets":            false,
	} {
		if got := operatorMetadataDir(dir); got != want {
			t.Errorf("operatorMetadataDir(%q) = %v", dir, got)
		}
	}
}
