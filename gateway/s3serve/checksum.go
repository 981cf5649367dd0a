package s3serve

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/versity/versitygw/s3api/middlewares"
	"github.com/versity/versitygw/s3api/utils"
	"github.com/versity/versitygw/s3err"
)

// headerSum is a checksum a client sent in a header (x-amz-checksum-ALGO)
// for the body of its request.
type headerSum struct {
	value *string
	kind  utils.HashType
}

// headerSums lists the checksum headers a request may carry, in the
// order versitygw's posix backend checks them.
func headerSums(crc32, crc32c, sha1, sha256, crc64nvme, sha512, md5, xxh64, xxh3, xxh128 *string) []headerSum {
	return []headerSum{{crc32, utils.HashTypeCRC32}, {crc32c, utils.HashTypeCRC32C}, {sha1, utils.HashTypeSha1},
		{sha256, utils.HashTypeSha256}, {crc64nvme, utils.HashTypeCRC64NVME}, {sha512, utils.HashTypeSha512},
		{md5, utils.HashTypeMd5}, {xxh64, utils.HashTypeXXHASH64}, {xxh3, utils.HashTypeXXHASH3}, {xxh128, utils.HashTypeXXHASH128}}
}

// checksummed wraps body so that the first checksum of sums the client
// sent is verified as the body is read (versitygw's HashReader): at the
// end of a body that does not match, the read fails with BadDigest, and
// the atomic write it feeds publishes nothing. A trailing checksum of a
// chunked upload is verified by versitygw's chunk reader itself; Content-MD5
// by its router.
func checksummed(body io.Reader, sums []headerSum) (io.Reader, error) {
	if body == nil {
		body = strings.NewReader("")
	}
	if cr, ok := body.(middlewares.ChecksumReader); ok && cr.Algorithm() != "" {
		return body, nil
	}
	for _, s := range sums {
		if s.value != nil {
			return utils.NewHashReader(body, *s.value, s.kind)
		}
	}
	return body, nil
}

// unkept refuses a write asking for what the front door does not keep
// (object tags, object lock): NotImplemented, never a success that
// silently drops it. User metadata (x-amz-meta-*) is not refused: S3
// clients send it on every write (ckgate's own driver its write id), and
// dropping it changes no byte a reader gets.
func unkept(tagging *string, lockMode types.ObjectLockMode, legalHold types.ObjectLockLegalHoldStatus, retainUntil *time.Time) error {
	what := ""
	switch {
	case tagging != nil && *tagging != "":
		what = "object tags (x-amz-tagging)"
	case lockMode != "" || legalHold == types.ObjectLockLegalHoldStatusOn || (retainUntil != nil && !retainUntil.IsZero()):
		what = "object lock (x-amz-object-lock-*)"
	default:
		return nil
	}
	return s3err.APIError{Code: "NotImplemented", Description: "ckgate serve does not keep " + what, HTTPStatusCode: http.StatusNotImplemented}
}
