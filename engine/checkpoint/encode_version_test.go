package checkpoint

import (
	"errors"
	"testing"
)

// TestEncodeVersion: every encoder writes its default version when none is
// set and refuses one it could not read back, naming the file kind.
func TestEncodeVersion(t *testing.T) {
	md := &OffsetSeqMetadata{}
	for _, tc := range []struct {
		what   string
		encode func(v int) ([]byte, error)
		max    int
		def    string
	}{
		{"commit log", func(v int) ([]byte, error) { return CommitMetadata{Version: v}.Encode() }, CommitLogMaxVersion, "v1\n"},
		{"offset log", func(v int) ([]byte, error) { return OffsetSeq{Version: v, Metadata: md}.Encode() }, OffsetLogMaxVersion, "v1\n"},
		{"operator metadata", func(v int) ([]byte, error) { return OperatorMetadata{Version: v}.Encode() }, OperatorMetadataMaxVersion, "v1\n"},
		{"state schema", func(v int) ([]byte, error) {
			return StateSchema{Version: v, ColumnFamilies: []ColumnFamilySchema{{Name: "default"}}}.Encode()
		}, StateSchemaMaxVersion, "\x00\x02v2"},
	} {
		b, err := tc.encode(0)
		if err != nil || len(b) < len(tc.def) || string(b[:len(tc.def)]) != tc.def {
			t.Errorf("%s, no version: %q, %v; want it to start %q", tc.what, b, err, tc.def)
		}
		_, err = tc.encode(tc.max + 1)
		var ve *VersionError
		if !errors.Is(err, ErrUnsupportedVersion) || !errors.As(err, &ve) || ve.What != tc.what || ve.Found != tc.max+1 {
			t.Errorf("%s v%d: %v; want a *VersionError for it", tc.what, tc.max+1, err)
		}
	}
}
