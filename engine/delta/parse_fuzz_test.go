package delta

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds every file of testdata/delta whose base name matches glob.
func seedFiles(f *testing.F, glob string) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join(realTables, "*", "_delta_log", glob))
	more, _ := filepath.Glob(filepath.Join(realTables, "*", "_delta_log", "_sidecars", glob))
	if len(paths) == 0 {
		f.Fatalf("no seed matches %s", glob)
	}
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseCommit(f *testing.F) {
	seedFiles(f, "*.json")
	f.Add([]byte("{\"add\":{\"path\":\"\"}}\n"))
	f.Add([]byte("null\n[]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		acts, err := ParseCommit("_delta_log/x.json", b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "_delta_log/x.json") {
				t.Fatalf("error %v is not ErrCorrupt naming the file", err)
			}
			return
		}
		if _, err := MarshalCommit(acts); err != nil {
			t.Fatalf("a parsed commit does not marshal: %v", err)
		}
	})
}

func FuzzParseLastCheckpoint(f *testing.F) {
	seedFiles(f, "_last_checkpoint")
	f.Add([]byte(`{"version":-1}`))
	f.Add([]byte(`{"version":1,"parts":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lc, err := ParseLastCheckpoint(LastCheckpointKey, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), LastCheckpointKey) {
				t.Fatalf("error %v is not ErrCorrupt naming the file", err)
			}
			return
		}
		if lc.Version < 0 {
			t.Fatalf("negative version %d accepted", lc.Version)
		}
	})
}

func FuzzParseLogName(f *testing.F) {
	for _, n := range []string{"00000000000000000010.json", "00000000000000000010.checkpoint.parquet",
		"00000000000000000001.checkpoint.0000000001.0000000002.parquet",
		"00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json",
		"00000000000000000003.00000000000000000007.compacted.json", "00000000000000000003.crc", "_last_checkpoint"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		lf, ok := ParseLogName(name)
		if !ok {
			return
		}
		if lf.Version < 0 || lf.End < lf.Version || lf.Part < 1 || lf.Part > lf.Parts {
			t.Fatalf("%q parsed to %+v", name, lf)
		}
		// the helpers that build names agree with the parser
		var back string
		switch lf.Kind {
		case KindCommit:
			back = CommitKey(lf.Version)
		case KindCheckpoint:
			back = CheckpointKey(lf.Version)
		case KindMultiPartCheckpoint:
			back = MultiPartCheckpointKey(lf.Version, lf.Part, lf.Parts)
		case KindV2Checkpoint:
			back = V2CheckpointKey(lf.Version, lf.UUID, lf.Format)
		default:
			return
		}
		if back != LogDir+name {
			t.Fatalf("%q parsed to %+v, which names %q", name, lf, back)
		}
	})
}

func FuzzParseCheckpointParquet(f *testing.F) {
	seedFiles(f, "*.parquet")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ParseCheckpointParquet("_delta_log/cp.parquet", b)
		if err != nil && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "_delta_log/cp.parquet")) {
			t.Fatalf("error %v is not ErrCorrupt naming the file", err)
		}
	})
}

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"interval 1 week", "interval 30 days", "2 hours 30 minutes", "1 month", "interval 9223372036854775807 microseconds"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseInterval(s)
		if err == nil && d < 0 {
			t.Fatalf("%q parsed to a negative %v", s, d)
		}
	})
}

func FuzzFileKey(f *testing.F) {
	for _, s := range []string{"part-0.parquet", "a%20b/c%3Dd.parquet", "file:/t/x.parquet", "file:///t/x", "s3a://b/t/x", "../x", "/t/../x", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		k, ok, err := FileKey("file:///t", p)
		if err != nil || !ok {
			return
		}
		if k == "" || strings.HasPrefix(k, "/") || k == ".." || strings.HasPrefix(k, "../") {
			t.Fatalf("FileKey(%q) = %q: not a key inside the table", p, k)
		}
	})
}

func FuzzDVKey(f *testing.F) {
	for _, s := range []string{"Zcq?bs*HKQWCB[Sjf[.o", "ab^-aqEH.-t@S}K{vb[*k^", "short", "#####################"} {
		f.Add("u", s)
	}
	f.Add("p", "file:///t/dv.bin")
	f.Add("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L")
	f.Fuzz(func(t *testing.T, typ, s string) {
		_, _, _ = DVKey("file:///t", &DeletionVector{StorageType: typ, PathOrInlineDv: s})
	})
}
