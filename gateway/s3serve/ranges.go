package s3serve

import (
	"fmt"

	vbackend "github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
)

// defaultContentType is what S3 answers for an object stored without
// one: ckgate keeps no object metadata, so it is every object's type (and
// Go's HTTP server does not sniff one from the bytes).
const defaultContentType = "binary/octet-stream"

// objectRange is the part of an object of size bytes a GET or HEAD asks
// for with Range or partNumber: its start and length, and the
// Content-Range to answer with (nil for the whole object, which is then
// 200, not 206). The front door stores every object as one part (a
// multipart upload is published as one object), so partNumber 1 is the
// whole object and any other is out of range, as S3 answers for an object
// that was not uploaded in parts.
func objectRange(size int64, rng string, part *int32) (start, length int64, contentRange *string, err error) {
	if part != nil {
		if *part > 1 {
			return 0, 0, nil, s3err.GetInvalidPartNumberRangeErr(1, *part)
		}
		if size == 0 {
			return 0, 0, nil, nil
		}
		cr := fmt.Sprintf("bytes 0-%d/%d", size-1, size)
		return 0, size, &cr, nil
	}
	start, length, partial, err := vbackend.ParseObjectRange(size, rng)
	if err != nil || !partial {
		return start, length, nil, err
	}
	cr := fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size)
	return start, length, &cr, nil
}
