package gateway

import "strings"

// DirMarkerName is the last segment of a directory-marker key (see
// # Directory markers in the package documentation). It starts with '.',
// so Hadoop and Spark (which skip names starting with '.' or '_') and
// ckgate's checkpoint readers treat it as hidden, and it is a valid key
// segment on every store (not one of filestore's reserved ".ckgate-"
// names).
const DirMarkerName = ".dir.ckgate"

// DirMarkerKey returns the key that marks dir as a directory ("offsets" or
// "offsets/" → "offsets/.dir.ckgate"): what an S3 client's "offsets/" (an
// empty object Hadoop's mkdirs writes) is stored as. dir "" (the root) has
// no marker: "".
func DirMarkerKey(dir string) string {
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return ""
	}
	return dir + "/" + DirMarkerName
}

// DirMarker reports whether key is a directory-marker key, and the
// directory it marks, with its trailing '/' ("offsets/.dir.ckgate" →
// "offsets/", true). A key named DirMarkerName at the root marks nothing.
func DirMarker(key string) (dir string, ok bool) {
	dir, ok = strings.CutSuffix(key, "/"+DirMarkerName)
	if !ok || dir == "" {
		return "", false
	}
	return dir + "/", true
}

// IsDirMarker reports whether key is a directory-marker key.
func IsDirMarker(key string) bool {
	_, ok := DirMarker(key)
	return ok
}
