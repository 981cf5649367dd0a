package s3serve

import (
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// IsLogEntry reports whether an object key (inside its bucket) names a
// Spark checkpoint log entry: offsets/N, commits/N, metadata (not an
// operator's state/…/metadata), sources/S/N and _spark_metadata/N, with
// their .compact files. A write of one with no condition is made
// create-only, whether or not the guard already knows its root: the first
// metadata of a new root has no root above it yet.
func IsLogEntry(key string) bool {
	parts := strings.Split(key, "/")
	name := parts[len(parts)-1]
	parent, grand := "", ""
	if len(parts) > 1 {
		parent = parts[len(parts)-2]
	}
	if len(parts) > 2 {
		grand = parts[len(parts)-3]
	}
	switch {
	case name == "metadata":
		for _, p := range parts[:len(parts)-1] {
			if p == "state" || p == "_metadata" {
				return false
			}
		}
		return true
	case parent == "offsets" || parent == "commits":
		return gateway.AllDigits(name)
	case parent == "_spark_metadata" || grand == "sources":
		return gateway.AllDigits(strings.TrimSuffix(name, ".compact"))
	}
	return false
}
