package delta

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// FileKey turns the path of an add or remove action (URI encoded, relative
// to the table root or an absolute URI) into a key under the table root.
// tableURL is the canonical location of the table (gateway.CanonicalRoot);
// an absolute path outside it returns ok false with the decoded location,
// so that a caller can name it rather than probe a wrong key.
func FileKey(tableURL, p string) (key string, ok bool, err error) {
	u, err := url.Parse(p)
	if err != nil {
		return "", false, fmt.Errorf("path %q is not a URI: %w", p, err)
	}
	if u.Scheme == "" && u.Host == "" && !strings.HasPrefix(u.Path, "/") {
		k := path.Clean(u.Path)
		if k == "." || k == ".." || strings.HasPrefix(k, "../") {
			return "", false, fmt.Errorf("path %q leaves the table", p)
		}
		return k, true, nil
	}
	abs := u.String()
	if u.Scheme == "" {
		abs = "file://" + u.Path
	}
	root := strings.TrimSuffix(tableURL, "/") + "/"
	if dec, err := url.PathUnescape(abs); err == nil {
		abs = dec
	}
	for _, cand := range absSpellings(abs) {
		if strings.HasPrefix(cand, root) {
			k := path.Clean(strings.TrimPrefix(cand, root))
			if k != "." && !strings.HasPrefix(k, "../") {
				return k, true, nil
			}
		}
	}
	return abs, false, nil
}

// absSpellings are the spellings of one absolute location that the same
// store is known by: file:/x and file:///x; s3a:// and s3n:// for s3://;
// abfss:// and wasbs:// are left as written (account/container differ).
func absSpellings(abs string) []string {
	out := []string{abs}
	switch {
	case strings.HasPrefix(abs, "file:/") && !strings.HasPrefix(abs, "file://"):
		out = append(out, "file://"+strings.TrimPrefix(abs, "file:"))
	case strings.HasPrefix(abs, "file:///"):
		out = append(out, "file:/"+strings.TrimPrefix(abs, "file:///"))
	case strings.HasPrefix(abs, "s3a://"), strings.HasPrefix(abs, "s3n://"):
		out = append(out, "s3://"+abs[len("s3a://"):])
	case strings.HasPrefix(abs, "gs://"):
	}
	return out
}

// DVKey is the key of the deletion vector file of dv under the table root,
// or "" for an inline vector; an absolute ("p") vector returns its path
// decoded, with ok false when it is outside tableURL.
func DVKey(tableURL string, dv *DeletionVector) (key string, ok bool, err error) {
	if dv == nil {
		return "", false, nil
	}
	switch dv.StorageType {
	case "i":
		return "", false, nil
	case "p":
		return FileKey(tableURL, dv.PathOrInlineDv)
	case "u":
		s := dv.PathOrInlineDv
		if len(s) < 20 {
			return "", false, fmt.Errorf("deletion vector %q: shorter than a Z85 UUID", s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		id, err := z85Decode(enc)
		if err != nil {
			return "", false, fmt.Errorf("deletion vector %q: %w", s, err)
		}
		name := "deletion_vector_" + formatUUID(id) + ".bin"
		if prefix != "" {
			name = prefix + "/" + name
		}
		return FileKey(tableURL, name)
	}
	return "", false, fmt.Errorf("deletion vector storage type %q is not u, p or i", dv.StorageType)
}

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Decode decodes Z85 (ZeroMQ RFC 32), whose length is a multiple of 5.
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("Z85 length %d is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			d := strings.IndexByte(z85Alphabet, s[i+j])
			if d < 0 {
				return nil, fmt.Errorf("%q is not a Z85 character", s[i+j])
			}
			v = v*85 + uint64(d)
		}
		if v > 0xffffffff {
			return nil, fmt.Errorf("Z85 group %q overflows", s[i:i+5])
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}

func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
