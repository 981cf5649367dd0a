package compat

import (
	"maps"
	"slices"
	"strings"
)

// Helpers the comparisons share: sets, keys and paths.

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Compact(sorted(a)), slices.Compact(sorted(b)))
}

// UnionKeys returns the keys of a and of b, each once, sorted.
func UnionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// normPath makes file paths comparable: file:/x, file:///x and /x are the
// same; a trailing slash does not matter.
func normPath(p string) string {
	p = strings.TrimSpace(p)
	switch {
	case strings.HasPrefix(p, "file:///"):
		p = p[len("file://"):]
	case strings.HasPrefix(p, "file://localhost/"):
		p = p[len("file://localhost"):]
	case strings.HasPrefix(p, "file:/"):
		p = p[len("file:"):]
	case strings.HasPrefix(p, "s3a://"), strings.HasPrefix(p, "s3n://"):
		p = "s3://" + p[len("s3a://"):]
	}
	return strings.TrimRight(p, "/")
}

func samePath(a, b string) bool { return normPath(a) == normPath(b) }

// coversPath reports whether the directory dir holds path (the recorded
// path is the common directory of the files the source read).
func coversPath(dir, path string) bool {
	d, p := normPath(dir), normPath(path)
	return d != "" && strings.HasPrefix(p, d+"/")
}
