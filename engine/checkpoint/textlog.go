package checkpoint

import (
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Text logs (offsets, commits, sources, _spark_metadata, operator metadata)
// start with a "v<int>" line. Spark reads them with Scala's getLines: lines
// end at "\n" (a trailing "\r" is dropped) and a final newline does not add
// an empty line, so files with and without a trailing newline read alike.

// splitLines splits data into lines as getLines does.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// parseVersionLine validates a "v<int>" header as MetadataVersionUtil does:
// a positive int after "v", at most max.
func parseVersionLine(line string, max int, what string) (int, error) {
	t := strings.TrimSpace(line)
	if len(t) < 2 || t[0] != 'v' {
		return 0, corruptf("%s: failed to read the log version from %q", what, clip(t, 20))
	}
	v, err := strconv.Atoi(t[1:])
	if err != nil || v <= 0 {
		if err != nil && gateway.AllDigits(t[1:]) {
			// an overflowing number is still a version, just an unknown one
			return 0, &VersionError{What: what, Found: int(^uint(0) >> 1), Max: max}
		}
		return 0, corruptf("%s: failed to read the log version from %q", what, clip(t, 20))
	}
	if v > max {
		return 0, &VersionError{What: what, Found: v, Max: max}
	}
	return v, nil
}

// versionedLines splits a text log file into its lines and reads the
// version of its first: no line at all is ErrTruncated saying empty (the
// message Spark gives for the file), a bad or too new version line what
// parseVersionLine says.
func versionedLines(data []byte, max int, what, empty string) ([]string, int, error) {
	lines := splitLines(data)
	if len(lines) == 0 {
		return nil, 0, truncatedf("%s", empty)
	}
	v, err := parseVersionLine(lines[0], max, what)
	if err != nil {
		return nil, 0, err
	}
	return lines, v, nil
}

// encodeVersion is the version line an Encode writes: v, or def when v is
// 0 (unset); one above max is a *VersionError (a file this package could
// not read back).
func encodeVersion(v, def, max int, what string) (int, error) {
	if v == 0 {
		v = def
	}
	if v > max {
		return 0, &VersionError{What: what, Found: v, Max: max}
	}
	return v, nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
